import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, conflict, invalidRequest, notFound, onSqlite, type Json } from "../helpers/inproc.ts";
import { updateMfaPolicy } from "../../src/activities/mfa/update_mfa_policy.ts";
import { addMfaPolicy, step } from "../helpers/mfa.ts";

const OP = "update_mfa_policy";
const TYPE = "ACTIVITY_TYPE_UPDATE_MFA_POLICY";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("update_mfa_policy", (h) => {
  const get = async (userId: string, mfaPolicyId: string): Promise<Json> =>
    (await h().query("get_mfa_policy", { userId, mfaPolicyId })).json.mfaPolicy as Json;

  it("absent fields are kept; given ones replace them", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    const as = { ...u!, userId: u!.userId };
    const id = await addMfaPolicy(h(), h().root, {
      userId: as.userId,
      mfaPolicyName: "before",
      condition: "true",
      notes: "n",
      order: 3,
      requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_SESSION" })],
    });
    const { mfaPolicyId } = completed(
      await h().submit(OP, TYPE, { userId: as.userId, mfaPolicyId: id, condition: "activity.action == 'EXPORT'" }),
      updateMfaPolicy,
    );
    assert.equal(mfaPolicyId, id);
    const p = await get(as.userId, id);
    assert.equal(p.condition, "activity.action == 'EXPORT'");
    assert.equal(p.mfaPolicyName, "before");
    assert.equal(p.order, 3);
    assert.equal(p.notes, "n");
    completed(
      await h().submit(OP, TYPE, {
        userId: as.userId,
        mfaPolicyId: id,
        mfaPolicyName: "after",
        order: 0,
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_PASSKEY" })],
      }),
      updateMfaPolicy,
    );
    const q = await get(as.userId, id);
    assert.equal(q.mfaPolicyName, "after");
    assert.equal(q.order, 0);
    assert.deepEqual(q.requiredAuthenticationMethods, [{ any: [{ type: "AUTHENTICATION_TYPE_PASSKEY" }] }]);
    assert.ok(Number(q.updatedAt.seconds) >= Number(p.updatedAt.seconds));
  });

  it("a policy is found only with its own user and organization (404)", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    const id = await addMfaPolicy(h(), h().root, {
      userId: a!.userId,
      requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_PASSKEY" })],
    });
    notFound(await h().submit(OP, TYPE, { userId: b!.userId, mfaPolicyId: id, condition: "false" }), /no MFA policy/);
    notFound(await h().submit(OP, TYPE, { userId: a!.userId, mfaPolicyId: MISSING, condition: "false" }), /no MFA policy/);
    const other = await h().newOrg();
    notFound(await h().submit(OP, TYPE, { userId: a!.userId, mfaPolicyId: id, condition: "false" }, { as: other }), /no user/);
    assert.equal((await get(a!.userId, id)).condition, "true");
  });

  it("refuses a renamed policy taking another's name (409) and a bad condition (400)", async () => {
    const [a] = await addUsersWithKeys(h(), 1);
    await addMfaPolicy(h(), h().root, {
      userId: a!.userId,
      mfaPolicyName: "one",
      requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_PASSKEY" })],
    });
    const two = await addMfaPolicy(h(), h().root, {
      userId: a!.userId,
      mfaPolicyName: "two",
      requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_PASSKEY" })],
    });
    conflict(await h().submit(OP, TYPE, { userId: a!.userId, mfaPolicyId: two, mfaPolicyName: "one" }), /already has/);
    invalidRequest(await h().submit(OP, TYPE, { userId: a!.userId, mfaPolicyId: two, condition: "nope(" }), /condition/, [
      "parameters.condition",
    ]);
    invalidRequest(await h().submit(OP, TYPE, { userId: a!.userId, mfaPolicyId: two, requiredAuthenticationMethods: [] }), /1 to 5 steps/);
  });
});
