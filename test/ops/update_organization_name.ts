import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, assertIdempotent, completed, forbidden, invalidRequest, onSqlite } from "../helpers/inproc.ts";
import { subOrganization } from "../helpers/sub-organizations.ts";
import { updateOrganizationName } from "../../src/activities/organizations/update_organization_name.ts";

const OP = "update_organization_name";
const TYPE = "ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME";

onSqlite("update_organization_name", (h) => {
  it("renames the organization; get_organization and the parent's NAME filter see the new name", async () => {
    const sub = await subOrganization(h());
    const r = completed(await h().submit(OP, TYPE, { organizationName: "Renamed Shop" }, { as: sub }), updateOrganizationName);
    assert.deepEqual(r, { organizationId: sub.organizationId, organizationName: "Renamed Shop" });
    assert.equal((await h().query("get_organization", {}, { as: sub })).json.organizationData.name, "Renamed Shop");
    const found = (await h().query("list_suborgs", { filterType: "NAME", filterValue: "Renamed Shop" })).json.organizationIds;
    assert.deepEqual(found, [sub.organizationId]);
  });

  it("the same body twice is one activity", async () => {
    const org = await h().newOrg();
    const res = await h().submit(OP, TYPE, { organizationName: "Once" }, { as: org });
    completed(res, updateOrganizationName);
    await assertIdempotent(h(), OP, TYPE, { organizationName: "Twice" });
  });

  it("is decided by the root quorum alone (403 to another user, whatever the policies)", async () => {
    const org = await h().newOrg();
    const [u] = await addUsersWithKeys(h(), 1, org);
    const policy = { policyName: "all", effect: "EFFECT_ALLOW", condition: "true", consensus: "true", notes: "" };
    completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", policy, { as: org }), "createPolicyResult");
    forbidden(await h().submit(OP, TYPE, { organizationName: "Mine now" }, { as: u }), /can only be approved by the root quorum/);
  });

  it("a parent cannot rename its sub-organization (403)", async () => {
    const sub = await subOrganization(h());
    forbidden(
      await h().submit(OP, TYPE, { organizationName: "Parent's pick" }, { organizationId: sub.organizationId }),
      /parent of organization/,
    );
  });

  for (const [what, params] of [
    ["a blank name", { organizationName: "   " }],
    ["a name over 256 characters", { organizationName: "n".repeat(257) }],
    ["a missing name", {}],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), /organizationName/, ["parameters.organizationName"]);
    });
  }
});
