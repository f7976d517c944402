import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, notFound, onSqlite } from "../helpers/inproc.ts";
import { addMfaPolicy, step } from "../helpers/mfa.ts";

const OP = "get_mfa_policy";

onSqlite("get_mfa_policy", (h) => {
  it("answers the policy of the named user; any other user, organization or id is 404", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    const id = await addMfaPolicy(h(), h().root, {
      userId: a!.userId,
      mfaPolicyName: "one",
      requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_SMS_OTP" })],
    });
    const { mfaPolicy } = (await h().query(OP, { userId: a!.userId, mfaPolicyId: id })).json;
    assert.equal(mfaPolicy.mfaPolicyId, id);
    assert.equal(mfaPolicy.mfaPolicyName, "one");
    assert.deepEqual(mfaPolicy.requiredAuthenticationMethods, [{ any: [{ type: "AUTHENTICATION_TYPE_SMS_OTP" }] }]);
    assert.equal(mfaPolicy.notes, undefined);
    assert.match(mfaPolicy.createdAt.seconds, /^\d+$/);
    notFound(await h().query(OP, { userId: b!.userId, mfaPolicyId: id }), /no MFA policy/);
    const other = await h().newOrg();
    notFound(await h().query(OP, { userId: a!.userId, mfaPolicyId: id }, { as: other }), /no MFA policy/);
  });
});
