import { it } from "node:test";
import assert from "node:assert/strict";
import { nestedAll } from "../helpers/policy-facts.ts";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  conflict,
  exhausted,
  invalidRequest,
  notFound,
  onSqlite,
  perEngine,
  UUID,
  type Json,
} from "../helpers/inproc.ts";
import { createMfaPolicy } from "../../src/activities/mfa/create_mfa_policy.ts";
import { MAX_MFA_POLICIES_PER_USER } from "../../src/store/mfa-policies.ts";
import { step } from "../helpers/mfa.ts";

const OP = "create_mfa_policy";
const TYPE = "ACTIVITY_TYPE_CREATE_MFA_POLICY";
const MISSING = "00000000-0000-4000-8000-000000000000";
const PASSKEY = { type: "AUTHENTICATION_TYPE_PASSKEY" };

const params = (userId: string, over: Json = {}): Json => ({
  userId,
  mfaPolicyName: "passkey for signing",
  condition: "activity.action == 'SIGN'",
  requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_SESSION" }), step(PASSKEY, { type: "AUTHENTICATION_TYPE_EMAIL_OTP" })],
  order: 1,
  notes: "why",
  ...over,
});

onSqlite("create_mfa_policy", (h) => {
  it("creates a policy for a user; get_mfa_policy shows it as given", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    const { mfaPolicyId } = completed(await h().submit(OP, TYPE, params(u!.userId)), createMfaPolicy);
    assert.match(mfaPolicyId, UUID);
    const { mfaPolicy } = (await h().query("get_mfa_policy", { userId: u!.userId, mfaPolicyId })).json;
    assert.equal(mfaPolicy.mfaPolicyName, "passkey for signing");
    assert.equal(mfaPolicy.condition, "activity.action == 'SIGN'");
    assert.equal(mfaPolicy.order, 1);
    assert.equal(mfaPolicy.notes, "why");
    assert.deepEqual(mfaPolicy.requiredAuthenticationMethods, [
      { any: [{ type: "AUTHENTICATION_TYPE_SESSION" }] },
      { any: [{ type: "AUTHENTICATION_TYPE_PASSKEY" }, { type: "AUTHENTICATION_TYPE_EMAIL_OTP" }] },
    ]);
  });

  it("the same body twice is one policy", async () => {
    await assertIdempotent(h(), OP, TYPE, params(h().root.userId, { mfaPolicyName: "idem" }));
  });

  it("a name is unique per user (409); another user may reuse it", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    completed(await h().submit(OP, TYPE, params(a!.userId, { mfaPolicyName: "dup" })), createMfaPolicy);
    conflict(await h().submit(OP, TYPE, params(a!.userId, { mfaPolicyName: "dup", order: 2 })), /already has an MFA policy named/);
    completed(await h().submit(OP, TYPE, params(b!.userId, { mfaPolicyName: "dup" })), createMfaPolicy);
  });

  it("a user of another organization is 404: a tenant's MFA policy never names another's user", async () => {
    const other = await h().newOrg();
    notFound(await h().submit(OP, TYPE, params(other.userId)), /no user/);
    notFound(await h().submit(OP, TYPE, params(MISSING)), /no user/);
  });

  it("a named passkey, API key or OAuth provider must be the user's own (404)", async () => {
    const [a] = await addUsersWithKeys(h(), 1);
    for (const type of ["AUTHENTICATION_TYPE_PASSKEY", "AUTHENTICATION_TYPE_API_KEY", "AUTHENTICATION_TYPE_OAUTH"]) {
      notFound(
        await h().submit(
          OP,
          TYPE,
          params(a!.userId, { mfaPolicyName: type, requiredAuthenticationMethods: [step({ type, id: MISSING })] }),
        ),
        /of user/,
      );
    }
  });

  for (const [what, over, pattern, field] of [
    ["a condition that does not compile", { condition: "activity.action ==" }, /invalid MFA policy condition/, "parameters.condition"],
    ["a blank condition", { condition: "   " }, /blank/, "parameters.condition"],
    [
      "a condition past the static cost bound (docs/policy-language.md §11.3)",
      { condition: nestedAll(100, 3) },
      /invalid MFA policy condition: .*the bound is 100000/,
      "parameters.condition",
    ],
    ["no steps", { requiredAuthenticationMethods: [] }, /1 to 5 steps/, "parameters.requiredAuthenticationMethods"],
    [
      "six steps",
      { requiredAuthenticationMethods: Array(6).fill(step(PASSKEY)) },
      /1 to 5 steps/,
      "parameters.requiredAuthenticationMethods",
    ],
    ["an empty step", { requiredAuthenticationMethods: [step()] }, /1 to 6 methods/, undefined],
    ["an unknown type", { requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_TOTP" })] }, /type must be one of/, undefined],
    [
      "an id that is not a UUID",
      { requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_PASSKEY", id: "x" })] },
      /UUID/,
      undefined,
    ],
    [
      "an email OTP with an id",
      { requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_EMAIL_OTP", id: MISSING })] },
      /has no id/,
      undefined,
    ],
    ["invitation ids", { requiredAuthenticationMethods: [step({ ...PASSKEY, invitationIds: [MISSING] })] }, /invitationIds/, undefined],
    ["a negative order", { order: -1 }, /order must be an integer/, "parameters.order"],
    ["a fractional order", { order: 1.5 }, /order must be an integer/, "parameters.order"],
    ["a blank name", { mfaPolicyName: " " }, /mfaPolicyName/, "parameters.mfaPolicyName"],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(
        await h().submit(OP, TYPE, params(h().root.userId, { mfaPolicyName: `bad ${what}`, ...over })),
        pattern,
        field ? [field] : undefined,
      );
    });
  }

  it("accepts an empty invitationIds, as the SDK type makes clients send it", async () => {
    completed(
      await h().submit(
        OP,
        TYPE,
        params(h().root.userId, { mfaPolicyName: "inv", requiredAuthenticationMethods: [step({ ...PASSKEY, invitationIds: [] })] }),
      ),
      createMfaPolicy,
    );
  });
});

perEngine("create_mfa_policy caps", (h) => {
  it(`at most ${MAX_MFA_POLICIES_PER_USER} per user, also when created concurrently (429)`, async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    const answers = await Promise.all(
      Array.from({ length: MAX_MFA_POLICIES_PER_USER + 3 }, (_, i) => h().submit(OP, TYPE, params(u!.userId, { mfaPolicyName: `p${i}` }))),
    );
    assert.equal(answers.filter((r) => r.status === 200).length, MAX_MFA_POLICIES_PER_USER);
    for (const r of answers.filter((r) => r.status !== 200)) exhausted(r, /at most 10 are allowed per user/);
    const listed = (await h().query("get_mfa_policies", { userId: u!.userId })).json.mfaPolicies;
    assert.equal(listed.length, MAX_MFA_POLICIES_PER_USER);
  });
});
