// IP allowlists as stored: one row per list (the organization's has public_key ''), rules
// in order. Every write bumps organizations.ip_allowlist_version in the same transaction,
// which is what the request-time cache (network/allowlist-cache.ts) keys on.
import { sql } from "kysely";
import type { Executor } from "./schema.ts";

export const ORGANIZATION_LIST = "";

export type OnEvaluationError = "ALLOW" | "DENY";

export interface StoredRule {
  cidr: string;
  label: string;
  createdAt: number;
}

export interface StoredList {
  /** '' for the organization's list. */
  publicKey: string;
  enabled: boolean;
  onEvaluationError: OnEvaluationError;
  rules: StoredRule[];
}

/** Every list of an organization (the organization's and its keys'), with their rules. */
export async function readAllowlists(db: Executor, organizationId: string): Promise<StoredList[]> {
  const [lists, rules] = await Promise.all([
    db.selectFrom("ip_allowlists").selectAll().where("organization_id", "=", organizationId).execute(),
    db
      .selectFrom("ip_allowlist_rules")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .orderBy("public_key")
      .orderBy("position")
      .execute(),
  ]);
  const byKey = new Map<string, StoredList>();
  for (const l of lists) {
    byKey.set(l.public_key, {
      publicKey: l.public_key,
      enabled: Number(l.enabled) === 1,
      onEvaluationError: l.on_evaluation_error,
      rules: [],
    });
  }
  for (const r of rules) byKey.get(r.public_key)?.rules.push({ cidr: r.cidr, label: r.label, createdAt: Number(r.created_at) });
  return [...byKey.values()];
}

export async function readAllowlist(db: Executor, organizationId: string, publicKey: string): Promise<StoredList | undefined> {
  const row = await db
    .selectFrom("ip_allowlists")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("public_key", "=", publicKey)
    .executeTakeFirst();
  if (!row) return undefined;
  const rules = await db
    .selectFrom("ip_allowlist_rules")
    .select(["cidr", "label", "created_at"])
    .where("organization_id", "=", organizationId)
    .where("public_key", "=", publicKey)
    .orderBy("position")
    .execute();
  return {
    publicKey,
    enabled: Number(row.enabled) === 1,
    onEvaluationError: row.on_evaluation_error,
    rules: rules.map((r) => ({ cidr: r.cidr, label: r.label, createdAt: Number(r.created_at) })),
  };
}

export async function bumpAllowlistVersion(db: Executor, organizationId: string, now: number): Promise<void> {
  await db
    .updateTable("organizations")
    .set({ ip_allowlist_version: sql<number>`ip_allowlist_version + 1`, updated_at: now })
    .where("id", "=", organizationId)
    .execute();
}

/** Replaces one list: its settings, and (when `rules` is given) all its rules. */
export async function writeAllowlist(
  db: Executor,
  organizationId: string,
  list: { publicKey: string; enabled: boolean; onEvaluationError: OnEvaluationError; rules?: { cidr: string; label: string }[] },
  now: number,
): Promise<void> {
  const updated = await db
    .updateTable("ip_allowlists")
    .set({ enabled: list.enabled ? 1 : 0, on_evaluation_error: list.onEvaluationError, updated_at: now })
    .where("organization_id", "=", organizationId)
    .where("public_key", "=", list.publicKey)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) {
    await db
      .insertInto("ip_allowlists")
      .values({
        organization_id: organizationId,
        public_key: list.publicKey,
        enabled: list.enabled ? 1 : 0,
        on_evaluation_error: list.onEvaluationError,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  if (list.rules) {
    await deleteRules(db, organizationId, list.publicKey);
    if (list.rules.length > 0) {
      await db
        .insertInto("ip_allowlist_rules")
        .values(
          list.rules.map((r, position) => ({
            organization_id: organizationId,
            public_key: list.publicKey,
            position,
            cidr: r.cidr,
            label: r.label,
            created_at: now,
          })),
        )
        .execute();
    }
  }
  await bumpAllowlistVersion(db, organizationId, now);
}

async function deleteRules(db: Executor, organizationId: string, publicKey: string): Promise<void> {
  await db.deleteFrom("ip_allowlist_rules").where("organization_id", "=", organizationId).where("public_key", "=", publicKey).execute();
}

/** Removes one list and its rules; false when there was none. */
export async function deleteAllowlist(db: Executor, organizationId: string, publicKey: string, now: number): Promise<boolean> {
  await deleteRules(db, organizationId, publicKey);
  const r = await db
    .deleteFrom("ip_allowlists")
    .where("organization_id", "=", organizationId)
    .where("public_key", "=", publicKey)
    .executeTakeFirst();
  await bumpAllowlistVersion(db, organizationId, now);
  return Number(r.numDeletedRows) > 0;
}
