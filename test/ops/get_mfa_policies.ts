import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, notFound, onSqlite, type Json } from "../helpers/inproc.ts";
import { addMfaPolicy, step } from "../helpers/mfa.ts";

const OP = "get_mfa_policies";

onSqlite("get_mfa_policies", (h) => {
  it("lists a user's policies in evaluation order (order, then creation); none for a user without", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    const m = [step({ type: "AUTHENTICATION_TYPE_PASSKEY" })];
    const late = await addMfaPolicy(h(), h().root, {
      userId: a!.userId,
      mfaPolicyName: "late",
      order: 5,
      requiredAuthenticationMethods: m,
    });
    const first = await addMfaPolicy(h(), h().root, {
      userId: a!.userId,
      mfaPolicyName: "first",
      order: 0,
      requiredAuthenticationMethods: m,
    });
    const tie = await addMfaPolicy(h(), h().root, { userId: a!.userId, mfaPolicyName: "tie", order: 0, requiredAuthenticationMethods: m });
    const listed = (await h().query(OP, { userId: a!.userId })).json.mfaPolicies as Json[];
    assert.deepEqual(
      listed.map((p) => p.mfaPolicyId),
      [first, tie, late],
    );
    assert.deepEqual((await h().query(OP, { userId: b!.userId })).json.mfaPolicies, []);
    // The user carries them (v1User.mfaPolicies), in the same order; a user without has [].
    const { user } = (await h().query("get_user", { userId: a!.userId })).json;
    assert.deepEqual(user.mfaPolicies, listed);
    assert.deepEqual((await h().query("get_user", { userId: b!.userId })).json.user.mfaPolicies, []);
  });

  it("a user of another organization is 404", async () => {
    const other = await h().newOrg();
    notFound(await h().query(OP, { userId: other.userId }), /no user/);
  });
});
