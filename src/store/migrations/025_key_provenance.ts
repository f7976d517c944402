import { sql, type Kysely } from "kysely";

// api_keys.trusted and api_keys.proved_at: where a registration of a public key came from and
// whether its holder has used it (docs/login-lookups.md §3, §5). A stamp naming a parent
// organization resolves below it only to a registration the app's backend made (trusted), one
// whose key has stamped (proved) or a fresh one; /v1/account PUBLIC_KEY offers only the first two.
// Adding the columns with a constant default rewrites no table on either engine.
//
// Backfill, so that existing users keep logging in by the parent's id:
//   - proved: every key that has a vote (a vote is a stamp whose signature was verified and
//     that resolved to that very row: votes.credential_id), proved at its first vote;
//   - trusted: the keys of the root users a create_sub_organization wrote in a top-level
//     organization's direct sub-organization (the key was created with the organization),
//     when that activity was submitted by one of the top-level organization's users other than
//     its auth proxy user, and no vote on it was stamped by an auth proxy's key — what
//     backend-word.ts decides today, read back from the activity that did it.
// Everything else starts unproved and untrusted: a key a tenant copied stops resolving below
// the parent once its window has passed, and the real holder's next stamp naming its own
// organization (or any resolving to its row) proves it. The backfill is safe to re-run.
const BATCH = 500;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("api_keys")
    .addColumn("trusted", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable("api_keys").addColumn("proved_at", "bigint").execute();
  await backfill(db);
}

/** Marks the existing rows proved or trusted (above); changes nothing when run again. */
export async function backfill(db: Kysely<unknown>): Promise<void> {
  // One pass over votes grouped by credential (UPDATE … FROM: PostgreSQL, SQLite ≥ 3.33).
  await sql`
    UPDATE api_keys SET proved_at = first_vote.at
    FROM (SELECT credential_id, MIN(created_at) AS at FROM votes GROUP BY credential_id) AS first_vote
    WHERE first_vote.credential_id = api_keys.id AND api_keys.proved_at IS NULL
  `.execute(db);

  // The backend's create_sub_organization activities, a page at a time (keyset on id); the
  // organization each made is read from its JSON result here rather than with each engine's
  // JSON operators.
  let after = "";
  for (;;) {
    const page = await sql<{ id: string; result: string | null }>`
      SELECT a.id, a.result FROM activities a
      JOIN organizations p ON p.id = a.organization_id AND p.parent_id IS NULL
      WHERE a.type LIKE 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION%' AND a.status = 'ACTIVITY_STATUS_COMPLETED' AND a.id > ${after}
        AND NOT EXISTS (SELECT 1 FROM auth_proxy_configs c WHERE c.user_id = a.submitted_by)
        AND NOT EXISTS (SELECT 1 FROM votes v JOIN auth_proxy_configs c ON c.public_key = lower(v.public_key) WHERE v.activity_id = a.id)
      ORDER BY a.id LIMIT ${BATCH}
    `.execute(db);
    const made = page.rows.map((r) => subOrganizationOf(r.result)).filter((id): id is string => id !== undefined);
    if (made.length > 0) {
      await sql`
        UPDATE api_keys SET trusted = 1
        WHERE api_keys.organization_id IN (${sql.join(made)})
          AND api_keys.created_at = (SELECT o.created_at FROM organizations o WHERE o.id = api_keys.organization_id)
      `.execute(db);
    }
    if (page.rows.length < BATCH) break;
    after = page.rows[page.rows.length - 1]!.id;
  }
}

/** The subOrganizationId of a create_sub_organization result (stored as the result object's JSON). */
function subOrganizationOf(result: string | null): string | undefined {
  if (!result) return undefined;
  try {
    const r = JSON.parse(result) as Record<string, unknown>;
    return typeof r.subOrganizationId === "string" ? r.subOrganizationId : undefined;
  } catch {
    return undefined;
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_keys").dropColumn("proved_at").execute();
  await db.schema.alterTable("api_keys").dropColumn("trusted").execute();
}
