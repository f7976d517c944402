import type { Kysely } from "kysely";

// MFA policies (docs/mfa.md §1, §2): each belongs to one user of one organization and goes
// with the user (on delete cascade). `required` is the JSON text of the ordered steps, each
// `{ any: [{ type, id? }] }`. `(user_id, name)` is unique: a user's policies are told apart
// by name as policies are.
//
// An activity waiting for authenticators (docs/mfa.md §3) has one mfa_requirements row per user
// that owes them: the policy that matched, its steps as they were when it matched (an update
// of the policy later does not move the goalposts of a waiting activity) and the steps met
// so far (`satisfied`: JSON array, per step, of the method that met it or null).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("mfa_policies")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("condition", "text", (c) => c.notNull())
    .addColumn("required", "text", (c) => c.notNull())
    .addColumn("position", "bigint", (c) => c.notNull())
    .addColumn("notes", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addUniqueConstraint("mfa_policies_user_name", ["user_id", "name"])
    .execute();
  await db.schema.createIndex("mfa_policies_org").on("mfa_policies").column("organization_id").execute();
  await db.schema
    .createTable("mfa_requirements")
    .addColumn("activity_id", "text", (c) => c.notNull().references("activities.id"))
    .addColumn("user_id", "text", (c) => c.notNull())
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("mfa_policy_id", "text", (c) => c.notNull())
    .addColumn("required", "text", (c) => c.notNull())
    .addColumn("satisfied", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("mfa_requirements_pk", ["activity_id", "user_id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("mfa_requirements").execute();
  await db.schema.dropTable("mfa_policies").execute();
}
