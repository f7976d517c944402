// The state a new activity is decided and recorded against, read with its caller: the
// policy version of the caller's organization (governance.ts keeps compiled policy sets per
// version), the caller's user tag ids (policy consensus reads `approvers[…].tags`), and the
// version of the webhook endpoint set (outbox.ts caches who listens per version), and whether
// the caller has MFA policies at all (docs/mfa.md §7: most users have none, and then the
// submission reads none).
//
// It is its own step, but not its own statement: the columns ride on the statement that
// finds the credential (auth/strategy.ts, Rider), keyed by the user and organization found.
// On SQLite every separate read waits for the connection the commit group holds; a snapshot
// read of its own lowered the activity rate by 3–6 % (interleaved `npm run bench` runs). Queries
// need none of it and do not ask for it.
import { sql } from "kysely";
import { dialectOf } from "../store/engines.ts";
import { WEBHOOK_VERSION_KEY } from "../store/webhooks.ts";
import type { Rider } from "../auth/strategy.ts";

export interface RequestSnapshot {
  /** Policy version of the acting user's organization (the one whose policies decide). */
  policyVersion: number;
  /** The acting user's tag ids as the request found them. */
  tagIds: string[];
  /** Version of the webhook endpoint set. */
  webhookVersion: number;
  /** Whether the acting user has any MFA policy (the submission reads them only then). */
  hasMfaPolicies: boolean;
  /** Version of the acting user's organization's signing keys (a remembered signer is good for it: docs/signing.md §5). */
  keysVersion: number;
}

export const requestSnapshot: Rider<RequestSnapshot> = {
  columns: (db) => [
    sql<number>`organizations.policy_version`.as("snapshot_policy_version"),
    // The user's tag ids as one comma-separated column (UUIDs hold no comma).
    dialectOf(db).tagIdList().as("snapshot_tag_ids"),
    sql<string | null>`(select value from sigil_meta where key = ${WEBHOOK_VERSION_KEY})`.as("snapshot_webhook_version"),
    sql<number | boolean>`exists(select 1 from mfa_policies where mfa_policies.user_id = users.id)`.as("snapshot_has_mfa"),
    sql<number | string>`organizations.keys_version`.as("snapshot_keys_version"),
  ],
  read(row) {
    const tags = row.snapshot_tag_ids;
    const webhookVersion = row.snapshot_webhook_version;
    const hasMfa = row.snapshot_has_mfa;
    return {
      policyVersion: Number(row.snapshot_policy_version),
      tagIds: typeof tags === "string" && tags !== "" ? tags.split(",") : [],
      webhookVersion: webhookVersion === null || webhookVersion === undefined ? 0 : Number(webhookVersion),
      // PostgreSQL answers a boolean, SQLite 0 or 1.
      hasMfaPolicies: hasMfa === true || Number(hasMfa) === 1,
      // PostgreSQL answers a bigint as a string.
      keysVersion: Number(row.snapshot_keys_version),
    };
  },
};
