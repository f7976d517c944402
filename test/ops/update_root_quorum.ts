import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, forbidden, invalidRequest, notFound, onSqlite, type Json } from "../helpers/inproc.ts";
import { updateRootQuorum } from "../../src/activities/organizations/update_root_quorum.ts";
import { createPolicyV3 } from "../../src/activities/policies/create_policy.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";

const OP = "update_root_quorum";
const TYPE = "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("update_root_quorum", (h) => {
  it("replaces the quorum: afterwards one root's activity awaits the other", async () => {
    const org = await h().newOrg();
    const [b] = await addUsersWithKeys(h(), 1, org);
    assert.deepEqual(
      completed(await h().submit(OP, TYPE, { threshold: 2, userIds: [org.userId, b!.userId] }, { as: org }), updateRootQuorum),
      {},
    );
    const next = await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "t", userIds: [] }, { as: org });
    assert.equal(next.json.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");
  });

  it("is decided by the root quorum alone: an allow-everything policy lets a non-root user act, but not change the quorum (403)", async () => {
    const org = await h().newOrg();
    const [u] = await addUsersWithKeys(h(), 1, org);
    const policy = { policyName: "all", effect: "EFFECT_ALLOW", condition: "true", consensus: "true", notes: "" };
    completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", policy, { as: org }), createPolicyV3);
    completed(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "allowed", userIds: [] }, { as: u }),
      createUserTag,
    );
    forbidden(await h().submit(OP, TYPE, { threshold: 1, userIds: [u!.userId] }, { as: u }), /can only be approved by the root quorum/);
  });

  it("an unknown user is 404", async () => {
    notFound(await h().submit(OP, TYPE, { threshold: 1, userIds: [MISSING] }), /no user/);
  });

  const refused: [string, Json, RegExp, string][] = [
    ["a threshold above the users", { threshold: 2, userIds: [MISSING] }, /exceeds/, "parameters.threshold"],
    ["a repeated user", { threshold: 1, userIds: [MISSING, MISSING] }, /must not repeat/, "parameters.userIds"],
    ["a zero threshold", { threshold: 0, userIds: [MISSING] }, /threshold must be a whole number/, "parameters.threshold"],
    ["a fractional threshold", { threshold: 1.5, userIds: [MISSING] }, /threshold must be a whole number/, "parameters.threshold"],
    ["no users", { threshold: 1, userIds: [] }, /userIds must hold 1 to 100/, "parameters.userIds"],
  ];
  for (const [what, params, message, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), message, [field]);
    });
  }
});
