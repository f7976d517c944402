import { Type } from "@sinclair/typebox";
import type { ExpressionBuilder, SelectQueryBuilder } from "kysely";
import { invalid } from "../errors.ts";
import { OrganizationId, Pagination } from "../schemas/common.ts";
import { page, pageRequest, unknownCursor, type PageRequest } from "../store/pagination.ts";
import { canonicalB64url } from "../logins/passkey/encoding.ts";
import type { Database, Executor } from "../store/schema.ts";
import { defineQuery } from "./define.ts";
import { byWalletAccountAddress } from "../wallets/lookup.ts";
import { DEFAULT_LOGIN_SETTINGS, type LoginSettings } from "../logins/settings.ts";
import { oauthSettingsOf } from "../logins/oauth/configure.ts";
import { MAX_OIDC_TOKEN_LENGTH, requireOidcToken } from "../logins/oauth/verify-oidc.ts";
import { oidcClaims } from "../logins/oauth/oidc-claims.ts";

export type OrgQuery = SelectQueryBuilder<Database, "organizations", { id: string; created_at: number }>;

/**
 * How each filter type narrows the sub-organizations. A Map: the key is request data, and
 * a plain object would answer "constructor" or "__proto__" from Object.prototype.
 */
const FILTERS = new Map<string, (q: OrgQuery, value: string) => OrgQuery>([
  ["NAME", (q, v) => q.where("organizations.name", "=", v)],
  ["USERNAME", (q, v) => q.where("organizations.id", "in", (s) => s.selectFrom("users").select("organization_id").where("name", "=", v))],
  [
    "EMAIL",
    (q, v) =>
      q.where("organizations.id", "in", (s) =>
        s.selectFrom("users").select("organization_id").where("email_normalized", "=", v.toLowerCase()),
      ),
  ],
  [
    "PHONE_NUMBER",
    (q, v) => q.where("organizations.id", "in", (s) => s.selectFrom("users").select("organization_id").where("phone", "=", v)),
  ],
  [
    // A passkey's credential id (b64url of the raw id; base64 and padding accepted).
    "CREDENTIAL_ID",
    (q, v) =>
      q.where("organizations.id", "in", (s) =>
        s
          .selectFrom("authenticators")
          .select("organization_id")
          .where("credential_id_normalized", "=", canonicalB64url(v) ?? v),
      ),
  ],
  // An address of a wallet account (Ethereum in any casing; src/wallets/lookup.ts).
  ["WALLET_ACCOUNT_ADDRESS", byWalletAccountAddress],
  [
    // An OAuth identity given by its claims, JSON {iss, sub, aud} (what @turnkey/core sends
    // through the auth proxy's /v1/account; docs/auth-proxy-service.md §2.2): no token to verify,
    // so it names an identity and proves nothing.
    "OIDC_CLAIMS",
    (q, v) => {
      const c = oidcClaims(v);
      return q.where("organizations.id", "in", (s) =>
        s
          .selectFrom("oauth_providers")
          .select("organization_id")
          .where("issuer", "=", c.iss)
          .where("subject", "=", c.sub)
          .where("audience", "=", c.aud),
      );
    },
  ],
  ["PUBLIC_KEY", (q, v) => q.where("organizations.id", "in", (s) => keyHolders(s, v))],
]);

const keyHolders = (s: ExpressionBuilder<Database, "organizations">, v: string) =>
  s.selectFrom("api_keys").select("organization_id").where("public_key_normalized", "=", v.toLowerCase());

/**
 * PUBLIC_KEY asked by the auth proxy (core's wallet account look-up, /v1/account): only
 * registrations the app's backend made or whose key has stamped. Anyone can register anyone's
 * public key through the proxy; offering such a registration to the key's holder would log her
 * into it (docs/login-lookups.md §3). The backend's own list_suborgs keeps upstream's answer.
 */
const vouchedKeyHolders = (q: OrgQuery, v: string): OrgQuery =>
  q.where("organizations.id", "in", (s) => keyHolders(s, v).where((eb) => eb.or([eb("trusted", "=", 1), eb("proved_at", "is not", null)])));

/**
 * OIDC_TOKEN: the value is an OIDC token (Sigil's or a trusted issuer's), verified in full
 * except the nonce (a look-up logs nobody in); then the sub-organizations with a user holding
 * its identity (iss, sub, any of its audiences). Verified before the query is built: the
 * issuer's JWKS may be fetched.
 */
async function oidcTokenFilter(
  db: Executor,
  token: string,
  logins: LoginSettings | undefined,
  now: number,
): Promise<(q: OrgQuery) => OrgQuery> {
  const identity = await requireOidcToken(db, token, oauthSettingsOf(logins ?? DEFAULT_LOGIN_SETTINGS), "filterValue", { now });
  return (q) =>
    q.where("organizations.id", "in", (s) =>
      s
        .selectFrom("oauth_providers")
        .select("organization_id")
        .where("issuer", "=", identity.iss)
        .where("subject", "=", identity.sub)
        .where("audience", "in", identity.aud),
    );
}

/** A filter value other than an OIDC token (a name, contact, key, credential id or address). */
export const MAX_FILTER_VALUE_LENGTH = 1024;

/** Values are read with the longest any filter takes (an OIDC token); every other filter is held to MAX_FILTER_VALUE_LENGTH. */
export function requireShortFilterValue(value: string): void {
  if (value.length > MAX_FILTER_VALUE_LENGTH) {
    throw invalid(`filterValue: at most ${MAX_FILTER_VALUE_LENGTH} characters for this filter type`, [
      { field: "filterValue", description: `at most ${MAX_FILTER_VALUE_LENGTH} characters` },
    ]);
  }
}

/** The request and response of list_suborgs and list_verified_suborgs (the same swagger shapes). */
export const SubOrgsRequest = Type.Object({
  organizationId: OrganizationId,
  filterType: Type.Optional(Type.String({ maxLength: 64 })),
  // Long enough for an OIDC token (OIDC_TOKEN).
  filterValue: Type.Optional(Type.String({ maxLength: MAX_OIDC_TOKEN_LENGTH })),
  paginationOptions: Type.Optional(Pagination),
});
export const SubOrgsResponse = Type.Object({ organizationIds: Type.Array(Type.String()) });

export const listSuborgs = defineQuery({
  op: "list_suborgs",
  summary: "Ids of the organization's direct sub-organizations, oldest first, optionally filtered.",
  request: SubOrgsRequest,
  response: SubOrgsResponse,
  async run({ db, organization, logins, now, byAuthProxy }, req) {
    const pageReq = pageRequest(req.paginationOptions);
    let q: OrgQuery = db
      .selectFrom("organizations")
      .select(["organizations.id as id", "organizations.created_at as created_at"])
      .where("organizations.parent_id", "=", organization.id)
      // A deleted sub-organization is unknown (docs/organizations.md §7.3).
      .where("organizations.deleted_at", "is", null);
    const type = req.filterType || undefined;
    if (type !== undefined) {
      const filter = type === "PUBLIC_KEY" && byAuthProxy ? vouchedKeyHolders : FILTERS.get(type);
      if (!filter && type !== "OIDC_TOKEN") {
        throw invalid(`filterType ${JSON.stringify(type)} is not a known filter type`, [
          { field: "filterType", description: `one of ${[...FILTERS.keys(), "OIDC_TOKEN"].join(", ")}` },
        ]);
      }
      if (!req.filterValue)
        throw invalid("filterValue must be set when filterType is", [{ field: "filterValue", description: "must be set" }]);
      if (filter) requireShortFilterValue(req.filterValue);
      q = filter ? filter(q, req.filterValue) : (await oidcTokenFilter(db, req.filterValue, logins, now))(q);
    } else if (req.filterValue) {
      throw invalid("filterType must be set when filterValue is", [{ field: "filterType", description: "must be set" }]);
    }
    return { organizationIds: await pageOfSubOrganizations(db, organization.id, q, pageReq) };
  },
});

/**
 * One page of a parent's direct sub-organizations (`q`: those rows, possibly filtered, as
 * list_suborgs selects them), oldest first; `after`/`before` name a sub-organization of that parent.
 */
export async function pageOfSubOrganizations(db: Executor, parentId: string, q: OrgQuery, pageReq: PageRequest): Promise<string[]> {
  const cursorId = pageReq.before ?? pageReq.after;
  let cursor;
  if (cursorId) {
    cursor = await db
      .selectFrom("organizations")
      .select(["created_at", "id"])
      .where("id", "=", cursorId)
      .where("parent_id", "=", parentId)
      .executeTakeFirst();
    if (!cursor) unknownCursor(cursorId);
  }
  return (await page(q, pageReq, cursor, false)).map((r) => r.id);
}
