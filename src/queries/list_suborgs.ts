import { Type } from "@sinclair/typebox";
import type { SelectQueryBuilder } from "kysely";
import { invalid } from "../errors.ts";
import { OrganizationId, Pagination } from "../schemas/common.ts";
import { page, pageRequest, unknownCursor, type PageRequest } from "../store/pagination.ts";
import { canonicalB64url } from "../auth/webauthn/encoding.ts";
import type { Database, Executor } from "../store/schema.ts";
import { defineQuery } from "./define.ts";
import { byWalletAccountAddress } from "../wallets/lookup.ts";

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
      q.where("organizations.id", "in", (s) => s.selectFrom("users").select("organization_id").where("email_normalized", "=", v.toLowerCase())),
  ],
  ["PHONE_NUMBER", (q, v) => q.where("organizations.id", "in", (s) => s.selectFrom("users").select("organization_id").where("phone", "=", v))],
  [
    // A passkey's credential id (b64url of the raw id; base64 and padding accepted).
    "CREDENTIAL_ID",
    (q, v) =>
      q.where("organizations.id", "in", (s) =>
        s.selectFrom("authenticators").select("organization_id").where("credential_id_normalized", "=", canonicalB64url(v) ?? v),
      ),
  ],
  // An address of a wallet account (Ethereum in any casing; src/wallets/lookup.ts).
  ["WALLET_ACCOUNT_ADDRESS", byWalletAccountAddress],
  [
    "PUBLIC_KEY",
    (q, v) =>
      q.where("organizations.id", "in", (s) =>
        s.selectFrom("api_keys").select("organization_id").where("public_key_normalized", "=", v.toLowerCase()),
      ),
  ],
]);
/** Filter types of the spec whose credentials arrive with later features. */
const NOT_YET = ["OIDC_TOKEN"];

/** The request and response of list_suborgs and list_verified_suborgs (the same swagger shapes). */
export const SubOrgsRequest = Type.Object({
  organizationId: OrganizationId,
  filterType: Type.Optional(Type.String({ maxLength: 64 })),
  filterValue: Type.Optional(Type.String({ maxLength: 1024 })),
  paginationOptions: Type.Optional(Pagination),
});
export const SubOrgsResponse = Type.Object({ organizationIds: Type.Array(Type.String()) });

export const listSuborgs = defineQuery({
  op: "list_suborgs",
  summary: "Ids of the organization's direct sub-organizations, oldest first, optionally filtered.",
  request: SubOrgsRequest,
  response: SubOrgsResponse,
  async run({ db, organization }, req) {
    const pageReq = pageRequest(req.paginationOptions);
    let q: OrgQuery = db
      .selectFrom("organizations")
      .select(["organizations.id as id", "organizations.created_at as created_at"])
      .where("organizations.parent_id", "=", organization.id);
    const type = req.filterType || undefined;
    if (type !== undefined) {
      const filter = FILTERS.get(type);
      if (!filter) {
        const why = NOT_YET.includes(type) ? "is not supported by this server yet" : "is not a known filter type";
        throw invalid(`filterType ${JSON.stringify(type)} ${why}`, [
          { field: "filterType", description: `one of ${[...FILTERS.keys()].join(", ")}` },
        ]);
      }
      if (!req.filterValue) throw invalid("filterValue must be set when filterType is", [{ field: "filterValue", description: "must be set" }]);
      q = filter(q, req.filterValue);
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
    cursor = await db.selectFrom("organizations").select(["created_at", "id"]).where("id", "=", cursorId).where("parent_id", "=", parentId).executeTakeFirst();
    if (!cursor) unknownCursor(cursorId);
  }
  return (await page(q, pageReq, cursor, false)).map((r) => r.id);
}
