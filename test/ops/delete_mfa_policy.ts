import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, forbidden, notFound, onSqlite } from "../helpers/inproc.ts";
import { deleteMfaPolicy } from "../../src/activities/mfa/delete_mfa_policy.ts";
import { addMfaPolicy, step } from "../helpers/mfa.ts";

const OP = "delete_mfa_policy";
const TYPE = "ACTIVITY_TYPE_DELETE_MFA_POLICY";

onSqlite("delete_mfa_policy", (h) => {
  const methods = [step({ type: "AUTHENTICATION_TYPE_PASSKEY" })];

  it("deletes a user's policy; a second delete is 404", async () => {
    const [a] = await addUsersWithKeys(h(), 1);
    const id = await addMfaPolicy(h(), h().root, { userId: a!.userId, requiredAuthenticationMethods: methods });
    assert.equal(completed(await h().submit(OP, TYPE, { userId: a!.userId, mfaPolicyId: id }), deleteMfaPolicy).mfaPolicyId, id);
    assert.deepEqual((await h().query("get_mfa_policies", { userId: a!.userId })).json.mfaPolicies, []);
    notFound(await h().submit(OP, TYPE, { userId: a!.userId, mfaPolicyId: id }), /no MFA policy/);
  });

  it("another user's id, or another organization, finds nothing (404) and deletes nothing", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    const id = await addMfaPolicy(h(), h().root, { userId: a!.userId, requiredAuthenticationMethods: methods });
    notFound(await h().submit(OP, TYPE, { userId: b!.userId, mfaPolicyId: id }), /no MFA policy/);
    notFound(await h().submit(OP, TYPE, { userId: a!.userId, mfaPolicyId: id }, { as: await h().newOrg() }), /no user/);
    assert.equal((await h().query("get_mfa_policies", { userId: a!.userId })).json.mfaPolicies.length, 1);
  });

  it("a delegated user allowed `activity.resource == 'MFA_POLICY' && activity.action == 'DELETE'` may delete (recovery); without it 403", async () => {
    const [delegate] = await addUsersWithKeys(h(), 1);
    const id = await addMfaPolicy(h(), h().root, {
      userId: h().root.userId,
      mfaPolicyName: "root's",
      condition: "false",
      requiredAuthenticationMethods: methods,
    });
    forbidden(await h().submit(OP, TYPE, { userId: h().root.userId, mfaPolicyId: id }, { as: delegate! }));
    completed(
      await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        policyName: "MFA recovery",
        effect: "EFFECT_ALLOW",
        condition:
          "activity.resource == 'MFA_POLICY' && activity.action == 'DELETE' && activity.params.user_id == '" + h().root.userId + "'",
        consensus: `approvers.any(user, user.id == '${delegate!.userId}')`,
        notes: "",
      }),
      "createPolicyResult",
    );
    assert.equal(
      completed(await h().submit(OP, TYPE, { userId: h().root.userId, mfaPolicyId: id }, { as: delegate! }), deleteMfaPolicy).mfaPolicyId,
      id,
    );
  });

  it("deleting the user deletes its policies", async () => {
    const [a] = await addUsersWithKeys(h(), 1);
    const id = await addMfaPolicy(h(), h().root, { userId: a!.userId, requiredAuthenticationMethods: methods });
    completed(await h().submit("delete_users", "ACTIVITY_TYPE_DELETE_USERS", { userIds: [a!.userId] }), "deleteUsersResult");
    const rows = await h().service.store.db.selectFrom("mfa_policies").select("id").where("id", "=", id).execute();
    assert.deepEqual(rows, []);
  });
});
