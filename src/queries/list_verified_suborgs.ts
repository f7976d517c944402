import { invalid } from "../errors.ts";
import { pageRequest } from "../store/pagination.ts";
import { defineQuery } from "./define.ts";
import { requireShortFilterValue, pageOfSubOrganizations, SubOrgsRequest, SubOrgsResponse, type OrgQuery } from "./list_suborgs.ts";

/**
 * Sub-organizations having a user whose contact equals the value AND was verified with a
 * token (sign-up, update_user_email / update_user_phone_number). A Map: the key is request
 * data, and a plain object would answer "constructor" or "__proto__" from Object.prototype.
 */
const FILTERS = new Map<string, (q: OrgQuery, value: string) => OrgQuery>([
  [
    "EMAIL",
    (q, v) =>
      q.where("organizations.id", "in", (s) =>
        s
          .selectFrom("users")
          .select("organization_id")
          .where("email_normalized", "=", v.toLowerCase())
          .where("email_verified_at", "is not", null),
      ),
  ],
  [
    "PHONE_NUMBER",
    (q, v) =>
      q.where("organizations.id", "in", (s) =>
        s.selectFrom("users").select("organization_id").where("phone", "=", v).where("phone_verified_at", "is not", null),
      ),
  ],
]);

export const listVerifiedSuborgs = defineQuery({
  op: "list_verified_suborgs",
  summary:
    "Ids of the organization's direct sub-organizations with a user whose email or phone number is the value and verified, oldest first.",
  request: SubOrgsRequest,
  response: SubOrgsResponse,
  async run({ db, organization }, req) {
    const pageReq = pageRequest(req.paginationOptions);
    // A look-up by contact: both are required (a list of every verified sub-organization
    // is not what this query is for; list_suborgs lists them all).
    const filter = FILTERS.get(req.filterType ?? "");
    if (!filter) {
      throw invalid(`filterType ${JSON.stringify(req.filterType ?? "")} is not a filter of verified contacts`, [
        { field: "filterType", description: `one of ${[...FILTERS.keys()].join(", ")}` },
      ]);
    }
    if (!req.filterValue) throw invalid("filterValue must be set", [{ field: "filterValue", description: "must be set" }]);
    requireShortFilterValue(req.filterValue);
    const q = filter(
      db
        .selectFrom("organizations")
        .select(["organizations.id as id", "organizations.created_at as created_at"])
        .where("organizations.parent_id", "=", organization.id)
        .where("organizations.deleted_at", "is", null),
      req.filterValue,
    );
    return { organizationIds: await pageOfSubOrganizations(db, organization.id, q, pageReq) };
  },
});
