// Cursor pagination shared by every list: items are ordered by (created_at, id), and
// `before` / `after` name an item of the list; a page is the `limit` items just before or
// just after it in the list's order.
import { sql, type SelectQueryBuilder } from "kysely";
import { invalid } from "../errors.ts";

export interface PageRequest {
  limit: number;
  before?: string;
  after?: string;
}

export interface Cursor {
  created_at: number;
  id: string;
}

export const DEFAULT_PAGE = 10;
export const MAX_PAGE = 100;

export function pageRequest(p: { limit?: string; before?: string; after?: string } | undefined): PageRequest {
  const limit = p?.limit === undefined || p.limit === "" ? DEFAULT_PAGE : Number(p.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw invalid(`paginationOptions.limit must be between 1 and ${MAX_PAGE}`, [
      { field: "paginationOptions.limit", description: `must be between 1 and ${MAX_PAGE}` },
    ]);
  }
  const before = p?.before || undefined;
  const after = p?.after || undefined;
  if (before && after) {
    throw invalid("paginationOptions: give either before or after, not both", [
      { field: "paginationOptions", description: "before and after are exclusive" },
    ]);
  }
  return { limit, before, after };
}

export function unknownCursor(id: string): never {
  throw invalid(`paginationOptions: no item with id ${JSON.stringify(id)} in this list`, [
    { field: "paginationOptions", description: "before/after must be the id of an item of this list" },
  ]);
}

/**
 * Applies ordering, cursor and limit to a query over a table with `created_at` and `id`.
 * `newestFirst` reverses the list's order (activities are listed newest first).
 */
export async function page<DB, TB extends keyof DB, O extends Cursor>(
  query: SelectQueryBuilder<DB, TB, O>,
  req: PageRequest,
  cursor: Cursor | undefined,
  newestFirst: boolean,
): Promise<O[]> {
  // Moving "after" follows the list order; moving "before" walks it backwards and the page
  // is reversed at the end, so it still reads in list order.
  const backwards = req.before !== undefined;
  const ascending = newestFirst === backwards;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the cursor's columns are named by the caller, not typed
  let q = query as unknown as SelectQueryBuilder<any, any, O>;
  if (cursor) {
    const op = ascending ? ">" : "<";
    // A row-value comparison, not `created_at > x OR (created_at = x AND id > y)`: both engines
    // turn it into a range of the (…, created_at, id) index, so a page deep into a list of a
    // million costs what the first page does (the OR form walked the index from its start).
    q = q.where(sql<boolean>`(created_at, id) ${sql.raw(op)} (${cursor.created_at}, ${cursor.id})`);
  }
  const dir = ascending ? "asc" : "desc";
  const rows = await q.orderBy("created_at", dir).orderBy("id", dir).limit(req.limit).execute();
  return backwards ? rows.reverse() : rows;
}
