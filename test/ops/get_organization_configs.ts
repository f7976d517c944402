import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, failsWith, onSqlite } from "../helpers/inproc.ts";
import { subOrganization } from "../helpers/sub-organizations.ts";

const OP = "get_organization_configs";

onSqlite("get_organization_configs", (h) => {
  it("answers the default features and the root quorum, as v1Config", async () => {
    const org = await h().newOrg();
    const { configs } = (await h().query(OP, {}, { as: org })).json;
    assert.deepEqual(configs.features, [
      { name: "FEATURE_NAME_EMAIL_AUTH", value: "" },
      { name: "FEATURE_NAME_OTP_EMAIL_AUTH", value: "" },
      { name: "FEATURE_NAME_SMS_AUTH", value: "" },
      { name: "FEATURE_NAME_EMAIL_RECOVERY", value: "" },
      { name: "FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY", value: "" },
      { name: "FEATURE_NAME_AUTH_PROXY", value: "" },
    ]);
    assert.deepEqual(configs.quorum, { threshold: 1, userIds: [org.userId] });
  });

  it("follows the quorum and the features as they change; a parent reads its sub-organization's", async () => {
    const org = await h().newOrg();
    const [b] = await addUsersWithKeys(h(), 1, org);
    completed(
      await h().submit(
        "update_root_quorum",
        "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM",
        { threshold: 1, userIds: [org.userId, b!.userId] },
        { as: org },
      ),
      "updateRootQuorumResult",
    );
    completed(
      await h().submit(
        "set_organization_feature",
        "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
        { name: "FEATURE_NAME_WEBHOOK", value: "https://hooks.example/in" },
        { as: org },
      ),
      "setOrganizationFeatureResult",
    );
    const { configs } = (await h().query(OP, {}, { as: org })).json;
    assert.deepEqual(configs.quorum, { threshold: 1, userIds: [org.userId, b!.userId].sort() });
    assert.deepEqual(
      configs.features.find((f: { name: string }) => f.name === "FEATURE_NAME_WEBHOOK"),
      { name: "FEATURE_NAME_WEBHOOK", value: "https://hooks.example/in" },
    );
    const sub = await subOrganization(h(), {}, org);
    const read = await h().query(OP, {}, { as: org, organizationId: sub.organizationId });
    assert.deepEqual(read.json.configs.quorum, { threshold: 1, userIds: [sub.userId] });
    // Features are per organization: the parent's WEBHOOK is not the sub-organization's.
    assert.ok(!read.json.configs.features.some((f: { name: string }) => f.name === "FEATURE_NAME_WEBHOOK"));
  });

  it("an organization that does not exist is answered as for an unknown credential (401)", async () => {
    failsWith(await h().query(OP, {}, { organizationId: "00000000-0000-4000-8000-0000000000aa" }), 401, 16, "PUBLIC_KEY_NOT_FOUND");
  });
});
