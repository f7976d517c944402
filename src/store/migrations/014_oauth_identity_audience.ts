import type { Kysely } from "kysely";

// How each OIDC identity was vouched for (docs/oauth-identities.md §4):
// 'OIDC_TOKEN' — a verified token of that very (issuer, audience, subject); 'OIDC_CLAIMS' —
// claims from a top-level organization's credential, backed by a token of the same issuer
// and subject. NULL: attached before this migration, when a sub-organization's user could
// still send claims — the rows an operator audits (the docs give the query). The identity
// itself stays unique per (issuer, audience, subject): index oauth_providers_identity (009).
// A nullable column without a default: no table rewrite on either engine, whatever its size.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oauth_providers").addColumn("vouched_by", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("oauth_providers").dropColumn("vouched_by").execute();
}
