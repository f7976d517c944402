import { sql, type Kysely } from "kysely";

// TVC apps. Desired state lives here; what runs is the runtime's (tvc/runtime.ts),
// reconciled by the controller. Operators belong to an organization; an operator set is a
// named threshold over operators (members in tvc_operator_set_members). A deployment's
// manifest is stored as the exact bytes operators sign (manifest, base64 in JSON); its
// approvals are unique per operator. `approved_at` is set once the manifest set's threshold
// of approvals is reached: from then on the deployment is desired to run (whether live or not).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("tvc_operators")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("tvc_operators_org_key").on("tvc_operators").columns(["organization_id", "public_key"]).unique().execute();

  await db.schema
    .createTable("tvc_operator_sets")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("threshold", "integer", (c) => c.notNull())
    /** sha256 of name, threshold and sorted member ids: identical sets are reused. */
    .addColumn("identity", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("tvc_operator_sets_identity")
    .on("tvc_operator_sets")
    .columns(["organization_id", "identity"])
    .unique()
    .execute();

  await db.schema
    .createTable("tvc_operator_set_members")
    .addColumn("set_id", "text", (c) => c.notNull().references("tvc_operator_sets.id"))
    .addColumn("operator_id", "text", (c) => c.notNull().references("tvc_operators.id"))
    .addColumn("position", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("tvc_operator_set_members_pk", ["set_id", "operator_id"])
    .execute();

  await db.schema
    .createTable("tvc_apps")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("quorum_public_key", "text", (c) => c.notNull())
    .addColumn("manifest_set_id", "text", (c) => c.notNull().references("tvc_operator_sets.id"))
    .addColumn("share_set_id", "text", (c) => c.notNull().references("tvc_operator_sets.id"))
    .addColumn("enable_egress", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("enable_debug_mode_deployments", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("live_deployment_id", "text")
    /** Set by delete_tvc_app_and_deployments (its deployments are soft-deleted with it). */
    .addColumn("deleted_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  // A deleted app's name is free again.
  await db.schema
    .createIndex("tvc_apps_org_name")
    .on("tvc_apps")
    .columns(["organization_id", "name"])
    .unique()
    .where(sql.ref("deleted_at"), "is", null)
    .execute();

  await db.schema
    .createTable("tvc_deployments")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("app_id", "text", (c) => c.notNull().references("tvc_apps.id"))
    .addColumn("manifest_id", "text", (c) => c.notNull())
    /** The manifest's exact bytes (UTF-8 JSON), base64: what operators sign. */
    .addColumn("manifest", "text", (c) => c.notNull())
    /** sha256 hex of the manifest bytes. */
    .addColumn("manifest_digest", "text", (c) => c.notNull())
    /** JSON of the deployment's intent as recorded (qosVersion, pivot container, health check, replicas, …). */
    .addColumn("spec", "text", (c) => c.notNull())
    .addColumn("replicas", "integer", (c) => c.notNull())
    .addColumn("approved_at", "bigint")
    .addColumn("deleted_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("tvc_deployments_manifest").on("tvc_deployments").column("manifest_id").unique().execute();
  await db.schema.createIndex("tvc_deployments_app").on("tvc_deployments").columns(["app_id", "created_at"]).execute();
  await db.schema.createIndex("tvc_deployments_desired").on("tvc_deployments").columns(["approved_at", "deleted_at"]).execute();

  await db.schema
    .createTable("tvc_manifest_approvals")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("deployment_id", "text", (c) => c.notNull().references("tvc_deployments.id"))
    .addColumn("manifest_id", "text", (c) => c.notNull())
    .addColumn("operator_id", "text", (c) => c.notNull().references("tvc_operators.id"))
    .addColumn("signature", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("tvc_manifest_approvals_operator")
    .on("tvc_manifest_approvals")
    .columns(["manifest_id", "operator_id"])
    .unique()
    .execute();
}
