import type { Kysely } from "kysely";

// Policies, the evaluation record of every decision, and what votes need for consensus.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("policies")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("effect", "text", (c) => c.notNull())
    .addColumn("condition", "text", (c) => c.notNull())
    .addColumn("consensus", "text", (c) => c.notNull())
    .addColumn("time", "text", (c) => c.notNull())
    .addColumn("notes", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  // "policy label must be unique" within an organization.
  await db.schema.createIndex("policies_org_name").on("policies").columns(["organization_id", "name"]).unique().execute();
  await db.schema.createIndex("policies_org_created").on("policies").columns(["organization_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("policy_evaluations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("activity_id", "text", (c) => c.notNull().references("activities.id"))
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("vote_id", "text", (c) => c.notNull())
    /** The policy set evaluated (policy_sets.id) and one outcome code per policy of it, in order. */
    .addColumn("policy_set_id", "text", (c) => c.notNull())
    .addColumn("outcomes", "text", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("policy_evaluations_activity").on("policy_evaluations").columns(["activity_id", "created_at"]).execute();

  // The policy ids an evaluation ran over, stored once per distinct set (content-addressed)
  // instead of in every record: a record with 100 policies stays ~150 bytes.
  await db.schema
    .createTable("policy_sets")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("policy_ids", "text", (c) => c.notNull())
    .execute();

  // Bumped in the same transaction as any change to an organization's policies or root
  // quorum: evaluators cache the compiled policy set per (organization, version).
  await db.schema
    .alterTable("organizations")
    .addColumn("policy_version", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  // The credential behind a vote, for the consensus keyword `credentials`.
  await db.schema
    .alterTable("votes")
    .addColumn("credential_id", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema
    .alterTable("votes")
    .addColumn("credential_type", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema.createIndex("votes_activity_user").on("votes").columns(["activity_id", "user_id"]).execute();
}

export async function down(): Promise<void> {
  throw new Error("migrations are forward-only");
}
