import type { Kysely } from "kysely";

// App proofs an activity carries when its submission asked for them (generateAppProofs).
export async function up(db: Kysely<unknown>): Promise<void> {
  /** JSON array of AppProof; null when the submission did not ask for proofs. */
  await db.schema.alterTable("activities").addColumn("app_proofs", "text").execute();
}

export async function down(): Promise<void> {
  throw new Error("migrations are forward-only");
}
