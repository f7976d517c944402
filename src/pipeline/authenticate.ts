// Who signed this request? In two steps, around the parsing of the body:
//   verifyStamp: the stamp header is read and its signature checked over the raw bytes,
//     with the public key the stamp names — before the body is parsed or anything is read;
//   resolveCredential: the key is looked up in the target organization or, failing that,
//     its ancestors (the nearest wins: a sub-org user's key beats the same key in the parent).
import type { IncomingHttpHeaders } from "node:http";
import { unauthenticated } from "../errors.ts";
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
  /**
   * The credential was found in an ancestor of the target organization, not in the target
   * itself: a parent acting on its sub-organization (it may read, not write — §6.7).
   */
  fromAncestor: boolean;
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

/** The stamp of the request, its signature verified over the raw body. */
export async function verifyStamp(headers: IncomingHttpHeaders, rawBody: Buffer): Promise<ApiKeyStamp> {
  const stamp = readApiKeyStamp(headers);
  // Verify before touching the body or the database: a forged request costs no parsing
  // and no query.
  if (!(await verifySignature(stamp.curve, stamp.publicKey, rawBody, stamp.signature))) {
    throw unauthenticated("SIGNATURE_INVALID", "could not verify api key signature");
  }
  return stamp;
}

const unknownKey = () =>
  unauthenticated("PUBLIC_KEY_NOT_FOUND", "could not find public key in organization or its parent organization");

/** The user behind a verified stamp, as a user of `organizationId` or of one of its ancestors. */
export async function resolveCredential(db: Db, stamp: ApiKeyStamp, organizationId: string, now: number): Promise<Authenticated> {
  const [chain, candidates] = await Promise.all([
    organizationChain(db, organizationId),
    credentialsByPublicKey(db, { publicKey: stamp.publicKey.toLowerCase() }),
  ]);
  // An organization that does not exist is answered like one where the key is unknown:
  // a caller who is no user of it (or of an ancestor) learns nothing about which exist.
  let key: (typeof candidates)[number] | undefined;
  for (const orgId of chain) {
    key = candidates.find((c) => c.organization_id === orgId);
    if (key) break;
  }
  if (!key) throw unknownKey();
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
    fromAncestor: key.organization_id !== organizationId,
  };
}
