// "Do these ids belong to this organization?" — asked before deleting or referencing rows.
import type { Executor } from "./schema.ts";

/** Tables whose rows belong to one organization by `organization_id`. */
export type OwnedTable = "users" | "user_tags" | "policies";

/** The ids among `ids` that are not rows of `table` in the organization, in input order. */
export async function missingIn(db: Executor, table: OwnedTable, organizationId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  // By primary key, the organization checked here: see ownedBy (util.ts) for the generic plan
  // that would otherwise read a large organization's index.
  const found = await db
    .selectFrom(table as "users")
    .select(["id", "organization_id"])
    .where("id", "in", ids)
    .execute();
  const have = new Set(found.filter((r) => r.organization_id === organizationId).map((r) => r.id));
  return ids.filter((id) => !have.has(id));
}
