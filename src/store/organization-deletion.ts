// Deleting an organization (delete_sub_organization, docs/organizations.md §7.2): everything it
// owns goes, in the caller's transaction; what records its history stays. The organization row
// itself stays as a tombstone (deleted_at) because its activities reference it, and a deleted
// organization is answered as an unknown one (organizationIsLive).
import { sql } from "kysely";
import type { Database, Executor } from "./schema.ts";
import { dialectOf } from "./engines.ts";
import { bumpWebhookVersion } from "./webhooks.ts";
import { bumpPolicyVersion } from "./policies.ts";

/**
 * Every table with an organization_id column is in exactly one of these two lists
 * (test/ops/delete_sub_organization.ts reads the schema of a migrated database and checks it, so
 * a table added later cannot be forgotten here).
 */
export const DELETED_WITH_ORGANIZATION = [
  "organization_features",
  "users",
  "root_quorum_members",
  "api_keys",
  "authenticators",
  "oauth_providers",
  "user_tags",
  "otps",
  "verification_tokens",
  "wallets",
  "wallet_accounts",
  "private_keys",
  "private_key_addresses",
  "private_key_tags",
  "policies",
  "ip_allowlists",
  "ip_allowlist_rules",
  "webhook_endpoints",
  "oauth2_credentials",
  "tvc_operators",
  "tvc_operator_sets",
  "tvc_apps",
  "tvc_deployments",
  "tvc_manifest_approvals",
  "auth_proxy_configs",
  "import_targets",
  "invitations",
  "session_profiles",
  "mfa_policies",
  "mfa_requirements",
] as const satisfies readonly (keyof Database)[];

/**
 * Kept: the activity record (activities, with their votes and policy evaluations, which have
 * no organization_id of their own or point at the activity), and the webhook events of its
 * activities, which its parents' endpoints may still have to receive.
 */
export const KEPT_WITH_ORGANIZATION = ["activities", "policy_evaluations", "webhook_events"] as const satisfies readonly (keyof Database)[];

/**
 * Locks the organization row against every transaction that references it (FOR UPDATE
 * conflicts with the FOR KEY SHARE a row insert with a foreign key to it takes, and with the
 * liveness check of every activity: liveOrganizationLocked in store/organizations.ts), then reads it. Undefined: no
 * such organization, or already deleted.
 */
export async function lockOrganizationForDeletion(tx: Executor, organizationId: string) {
  const q = tx.selectFrom("organizations").select(["id", "parent_id", "deleted_at"]).where("id", "=", organizationId);
  const row = await dialectOf(tx).forUpdate(q).executeTakeFirst();
  return row && row.deleted_at == null ? row : undefined;
}

/** Counts of the organization's wallets and private keys that were never exported. */
export async function unexportedKeys(tx: Executor, organizationId: string): Promise<{ wallets: number; privateKeys: number }> {
  // One after the other: a transaction is one connection.
  const w = await tx
    .selectFrom("wallets")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("organization_id", "=", organizationId)
    .where("exported", "!=", 1)
    .executeTakeFirstOrThrow();
  const k = await tx
    .selectFrom("private_keys")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("organization_id", "=", organizationId)
    .where("exported", "!=", 1)
    .executeTakeFirstOrThrow();
  return { wallets: Number(w.n), privateKeys: Number(k.n) };
}

/** Whether the organization has a sub-organization that was not deleted. */
export async function hasLiveSubOrganizations(tx: Executor, organizationId: string): Promise<boolean> {
  const row = await tx
    .selectFrom("organizations")
    .select("id")
    .where("parent_id", "=", organizationId)
    .where("deleted_at", "is", null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Deletes what the organization owns (children before the rows they reference) and marks the
 * organization deleted. The caller holds the lock (lockOrganizationForDeletion).
 */
export async function deleteOrganizationContents(tx: Executor, organizationId: string, now: number): Promise<void> {
  const org = organizationId;
  const users = tx.selectFrom("users").select("id").where("organization_id", "=", org);
  const userTags = tx.selectFrom("user_tags").select("id").where("organization_id", "=", org);
  const keyTags = tx.selectFrom("private_key_tags").select("id").where("organization_id", "=", org);
  const keys = tx.selectFrom("private_keys").select("id").where("organization_id", "=", org);
  const sets = tx.selectFrom("tvc_operator_sets").select("id").where("organization_id", "=", org);

  await tx
    .deleteFrom("user_tag_members")
    .where((eb) => eb.or([eb("tag_id", "in", userTags), eb("user_id", "in", users)]))
    .execute();
  await tx.deleteFrom("user_tags").where("organization_id", "=", org).execute();
  await tx
    .deleteFrom("private_key_tag_members")
    .where((eb) => eb.or([eb("tag_id", "in", keyTags), eb("private_key_id", "in", keys)]))
    .execute();
  await tx.deleteFrom("private_key_tags").where("organization_id", "=", org).execute();
  await tx.deleteFrom("private_key_addresses").where("organization_id", "=", org).execute();
  await tx.deleteFrom("private_keys").where("organization_id", "=", org).execute();
  await tx.deleteFrom("wallet_accounts").where("organization_id", "=", org).execute();
  await tx.deleteFrom("wallets").where("organization_id", "=", org).execute();
  await tx.deleteFrom("root_quorum_members").where("organization_id", "=", org).execute();
  await tx.deleteFrom("api_keys").where("organization_id", "=", org).execute();
  await tx.deleteFrom("authenticators").where("organization_id", "=", org).execute();
  await tx.deleteFrom("oauth_providers").where("organization_id", "=", org).execute();
  await tx.deleteFrom("otps").where("organization_id", "=", org).execute();
  await tx.deleteFrom("verification_tokens").where("organization_id", "=", org).execute();
  await tx.deleteFrom("ip_allowlist_rules").where("organization_id", "=", org).execute();
  await tx.deleteFrom("ip_allowlists").where("organization_id", "=", org).execute();
  await tx.deleteFrom("policies").where("organization_id", "=", org).execute();
  await tx.deleteFrom("oauth2_credentials").where("organization_id", "=", org).execute();
  await tx.deleteFrom("tvc_manifest_approvals").where("organization_id", "=", org).execute();
  await tx.updateTable("tvc_apps").set({ live_deployment_id: null }).where("organization_id", "=", org).execute();
  await tx.deleteFrom("tvc_deployments").where("organization_id", "=", org).execute();
  await tx.deleteFrom("tvc_apps").where("organization_id", "=", org).execute();
  await tx.deleteFrom("tvc_operator_set_members").where("set_id", "in", sets).execute();
  await tx.deleteFrom("tvc_operator_sets").where("organization_id", "=", org).execute();
  await tx.deleteFrom("tvc_operators").where("organization_id", "=", org).execute();
  await tx.deleteFrom("auth_proxy_configs").where("organization_id", "=", org).execute();
  await tx.deleteFrom("import_targets").where("organization_id", "=", org).execute();
  await tx.deleteFrom("organization_features").where("organization_id", "=", org).execute();
  await tx.deleteFrom("invitations").where("organization_id", "=", org).execute();
  await tx.deleteFrom("mfa_requirements").where("organization_id", "=", org).execute();
  await tx.deleteFrom("mfa_policies").where("organization_id", "=", org).execute();
  // After api_keys: a session key names the profile it was issued with.
  await tx.deleteFrom("session_profiles").where("organization_id", "=", org).execute();
  await deleteEndpoints(tx, org, now);
  await tx.deleteFrom("users").where("organization_id", "=", org).execute();
  await tx
    .updateTable("organizations")
    .set({ deleted_at: now, updated_at: now, settings: "{}", ip_allowlist_version: sql<number>`coalesce(ip_allowlist_version, 0) + 1` })
    .where("id", "=", org)
    .execute();
  // Cached governance and allowlists are keyed by these versions: a cached copy is never used again.
  await bumpPolicyVersion(tx, org);
}

/**
 * The organization's webhook endpoints and their deliveries. A delivery a dispatcher holds
 * (lease_until set: leased and not yet given back, docs/webhooks.md §5.2) is cancelled and kept
 * instead of deleted: the dispatcher records its attempt against that row when it finishes
 * (a foreign key), and a cancelled delivery is never tried again.
 */
async function deleteEndpoints(tx: Executor, organizationId: string, now: number): Promise<void> {
  const endpoints = tx.selectFrom("webhook_endpoints").select("id").where("organization_id", "=", organizationId);
  const unheld = tx.selectFrom("webhook_deliveries").select("id").where("endpoint_id", "in", endpoints).where("lease_until", "=", 0);
  await tx.deleteFrom("webhook_delivery_attempts").where("delivery_id", "in", unheld).execute();
  await tx.deleteFrom("webhook_deliveries").where("endpoint_id", "in", endpoints).where("lease_until", "=", 0).execute();
  await tx
    .updateTable("webhook_deliveries")
    .set({ status: "cancelled", updated_at: now })
    .where("endpoint_id", "in", endpoints)
    .where("status", "=", "pending")
    .execute();
  const removed = await tx.deleteFrom("webhook_endpoints").where("organization_id", "=", organizationId).executeTakeFirst();
  if (Number(removed.numDeletedRows) > 0) await bumpWebhookVersion(tx);
}
