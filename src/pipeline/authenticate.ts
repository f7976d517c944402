// Step 3 of the pipeline: who signed this request? Verifies the stamp over the raw body,
// then finds the credential in the target organization or, failing that, its ancestors
// (the nearest wins: a sub-org user's key beats the same key in the parent).
import type { IncomingHttpHeaders } from "node:http";
import { notFound, unauthenticated } from "../errors.ts";
import { readApiKeyStamp, type ApiKeyStamp } from "../auth/stamp-header.ts";
import { verifySignature } from "../crypto/public-keys.ts";
import { organizationChain } from "../store/organizations.ts";
import { isExpired } from "../store/api-keys.ts";
import { PostgresAdapter, sql } from "kysely";
import type { Db, Executor } from "../store/schema.ts";
import { precompiled } from "../store/precompiled.ts";
import { WEBHOOK_VERSION_KEY } from "../store/webhooks.ts";
import type { UserRow } from "../store/users.ts";
import type { Actor, TargetOrganization } from "../activities/define.ts";

export interface Authenticated {
  actor: Actor;
  /** The actor's user row, read with the credential (activity views reuse it). */
  user: UserRow;
  organization: TargetOrganization;
  stamp: ApiKeyStamp;
  /** The API key that signed: the credential behind the submitter's vote. */
  credential: { id: string; type: string };
  /** Policy version of the actor's organization (the one whose policies decide). */
  policyVersion: number;
  /** The actor's user tag ids as the request found them (policy consensus reads them). */
  tagIds: string[];
  /** Version of the webhook endpoint set (outbox.ts caches who listens per version). */
  webhookVersion: number;
}

/**
 * The user's tag ids as one comma-separated column (UUIDs hold no comma). Read with the
 * credential: on SQLite every separate read waits for the connection the commit group
 * holds, and a policy that reads `user.tags` would otherwise cost every activity one.
 */
function tagIdList(db: Executor) {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  return postgres
    ? sql<string | null>`(select string_agg(m.tag_id, ',' order by m.tag_id) from user_tag_members m where m.user_id = users.id)`
    : sql<string | null>`(select group_concat(tag_id, ',') from (select m.tag_id from user_tag_members m where m.user_id = users.id order by m.tag_id))`;
}

/** Every API key with this public key, with its user and organization name. */
const credentialsByPublicKey = precompiled(["publicKey"], (db, v) =>
  db
    .selectFrom("api_keys")
    .innerJoin("users", "users.id", "api_keys.user_id")
    .innerJoin("organizations", "organizations.id", "api_keys.organization_id")
    .leftJoin("sigil_meta", (j) => j.on("sigil_meta.key", "=", WEBHOOK_VERSION_KEY))
    .select([
      "api_keys.id as id",
      "api_keys.organization_id as organization_id",
      "api_keys.curve as curve",
      "api_keys.expires_at as expires_at",
      "api_keys.credential_type as credential_type",
      "users.id as user_id",
      "users.name as user_name",
      "users.email as user_email",
      "users.email_normalized as user_email_normalized",
      "users.phone as user_phone",
      "users.created_at as user_created_at",
      "users.updated_at as user_updated_at",
      "organizations.name as organization_name",
      "organizations.policy_version as policy_version",
      tagIdList(db).as("tag_ids"),
      "sigil_meta.value as webhook_version",
    ])
    .where("api_keys.public_key_normalized", "=", v.publicKey),
);

export async function authenticate(
  db: Db,
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
  organizationId: string,
  now: number,
): Promise<Authenticated> {
  const stamp = readApiKeyStamp(headers);
  // Verify before touching the database: a forged request costs us no query.
  if (!(await verifySignature(stamp.curve, stamp.publicKey, rawBody, stamp.signature))) {
    throw unauthenticated("SIGNATURE_INVALID", "could not verify api key signature");
  }
  const chain = await organizationChain(db, organizationId);
  if (chain.length === 0) throw notFound("no organization found with the given ID", "ORGANIZATION_NOT_FOUND");

  const candidates = await credentialsByPublicKey(db, { publicKey: stamp.publicKey.toLowerCase() });
  let key: (typeof candidates)[number] | undefined;
  for (const orgId of chain) {
    key = candidates.find((c) => c.organization_id === orgId);
    if (key) break;
  }
  if (!key) {
    throw unauthenticated("PUBLIC_KEY_NOT_FOUND", "could not find public key in organization or its parent organization");
  }
  if (key.curve !== stamp.curve) {
    throw unauthenticated("SIGNATURE_INVALID", "stamp scheme does not match the curve of the registered api key");
  }
  if (isExpired(key, now)) {
    // core matches "Unauthenticated desc = expired api key publicKey" to log the user out.
    throw unauthenticated(
      "API_KEY_EXPIRED",
      `rpc error: code = Unauthenticated desc = expired api key publicKey ${stamp.publicKey}`,
    );
  }
  return {
    actor: {
      userId: key.user_id,
      userName: key.user_name,
      organizationId: key.organization_id,
      organizationName: key.organization_name,
    },
    user: {
      id: key.user_id,
      organization_id: key.organization_id,
      name: key.user_name,
      email: key.user_email,
      email_normalized: key.user_email_normalized,
      phone: key.user_phone,
      created_at: key.user_created_at,
      updated_at: key.user_updated_at,
    },
    // The chain proved it exists (organizations are never re-parented).
    organization: { id: organizationId },
    stamp,
    credential: { id: key.id, type: key.credential_type },
    policyVersion: key.policy_version,
    tagIds: key.tag_ids ? key.tag_ids.split(",") : [],
    webhookVersion: key.webhook_version === null ? 0 : Number(key.webhook_version),
  };
}
