import type { Kysely } from "kysely";

// OTP and mail limits (docs/otp-limits-and-mail.md §4): large limit_slots scopes (messages per
// organization per hour) look for an expired slot of their scope and for the earliest time a
// slot frees itself (Retry-After); both are range reads on (scope, until) instead of a walk
// through every slot of the scope.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("limit_slots_scope_until").on("limit_slots").columns(["scope", "until"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("limit_slots_scope_until").ifExists().execute();
}
