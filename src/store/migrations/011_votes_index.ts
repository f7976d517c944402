import type { Kysely } from "kysely";

// votes_activity (activity_id) is a prefix of votes_activity_user (activity_id, user_id), which
// answers every look-up it did: one B-tree less to write with each vote (every activity has one).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("votes_activity").ifExists().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("votes_activity").ifNotExists().on("votes").column("activity_id").execute();
}
