import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, notFound, onSqlite } from "../helpers/inproc.ts";
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

  it("deleting the user deletes its policies", async () => {
    const [a] = await addUsersWithKeys(h(), 1);
    const id = await addMfaPolicy(h(), h().root, { userId: a!.userId, requiredAuthenticationMethods: methods });
    completed(await h().submit("delete_users", "ACTIVITY_TYPE_DELETE_USERS", { userIds: [a!.userId] }), "deleteUsersResult");
    const rows = await h().service.store.db.selectFrom("mfa_policies").select("id").where("id", "=", id).execute();
    assert.deepEqual(rows, []);
  });
});
