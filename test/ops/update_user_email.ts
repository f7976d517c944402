import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  conflict,
  forbidden,
  invalidRequest,
  notFound,
  perEngine,
  userParams,
  type Harness,
  type Json,
} from "../helpers/inproc.ts";
import { mintVerificationToken } from "../helpers/tokens.ts";
import { updateUserEmail } from "../../src/activities/users/update_user_email.ts";

const OP = "update_user_email";
const TYPE = "ACTIVITY_TYPE_UPDATE_USER_EMAIL";
const MISSING = "00000000-0000-4000-8000-000000000000";

const newUser = async (h: Harness, over: Json = {}): Promise<string> =>
  completed(await h.submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [userParams(over)] }), "createUsersResult").userIds[0];
const row = (h: Harness, userId: string) =>
  h.service.store.db
    .selectFrom("users")
    .select(["email", "email_verified_at", "updated_at"])
    .where("id", "=", userId)
    .executeTakeFirstOrThrow();
const newestActivity = async (h: Harness) =>
  (await h.query("list_activities", { paginationOptions: { limit: "1" } })).json.activities[0]?.id as string;
let n = 0;
const email = () => `e${++n}-${Date.now()}@example.com`;
// A token is accepted only from the key it is bound to (docs/login-lookups.md §4): the
// tests' tokens are bound to the key that stamps the update (root's, unless told).
const rootToken = (h: Harness, opts: Parameters<typeof mintVerificationToken>[1], as = h.root) =>
  mintVerificationToken(h, { boundTo: as.key.publicKey, ...opts });

perEngine("update_user_email", (h) => {
  it("with a token proving the new address, the email is set and verified", async () => {
    const userId = await newUser(h());
    const address = email();
    const { token } = await rootToken(h(), { contact: address.toUpperCase() });
    const res = await h().submit(OP, TYPE, { userId, userEmail: address, verificationToken: token });
    assert.deepEqual(completed(res, updateUserEmail), { userId });
    assert.equal(res.json.activity.intent.updateUserEmailIntent.userEmail, address);
    const r = await row(h(), userId);
    assert.equal(r.email, address);
    assert.equal(Number(r.email_verified_at), Number(r.updated_at));
    assert.equal((await h().query("get_user", { userId })).json.user.userEmail, address);
  });

  it("without a token the email is set unverified, also one that was verified", async () => {
    const address = email();
    const userId = await newUser(h());
    const { token } = await rootToken(h(), { contact: address });
    completed(await h().submit(OP, TYPE, { userId, userEmail: address, verificationToken: token }), updateUserEmail);
    assert.ok((await row(h(), userId)).email_verified_at);
    completed(await h().submit(OP, TYPE, { userId, userEmail: address }), updateUserEmail);
    const r = await row(h(), userId);
    assert.equal(r.email, address);
    assert.equal(r.email_verified_at, null);
  });

  it('"" removes the email (and its verification)', async () => {
    const userId = await newUser(h(), { userEmail: email() });
    completed(await h().submit(OP, TYPE, { userId, userEmail: "" }), updateUserEmail);
    assert.equal((await h().query("get_user", { userId })).json.user.userEmail, undefined);
    assert.deepEqual({ ...(await row(h(), userId)), updated_at: 0 }, { email: null, email_verified_at: null, updated_at: 0 });
  });

  it("a parent's token verifies a sub-organization user's email (the user acting in its sub-organization)", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    const sub = completed(
      await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: "contacts",
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: "s",
            apiKeys: [{ apiKeyName: "k", publicKey: u!.key.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
      }),
      "createSubOrganizationResultV8",
    );
    const me = { organizationId: sub.subOrganizationId as string, userId: sub.rootUserIds[0] as string, key: u!.key };
    const address = email();
    const { token } = await rootToken(h(), { contact: address }, me);
    completed(await h().submit(OP, TYPE, { userId: me.userId, userEmail: address, verificationToken: token }, { as: me }), updateUserEmail);
    const found = await h().query("list_verified_suborgs", { filterType: "EMAIL", filterValue: address });
    assert.deepEqual(found.json.organizationIds, [sub.subOrganizationId]);
    // A sub-organization's token serves only itself: not its parent.
    const other = email();
    const subToken = await rootToken(h(), { organizationId: me.organizationId, contact: other });
    const target = await newUser(h());
    invalidRequest(
      await h().submit(OP, TYPE, { userId: target, userEmail: other, verificationToken: subToken.token }),
      /not .* or one of its parents/,
      ["parameters.verificationToken"],
    );
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { userId: await newUser(h()), userEmail: email() });
  });

  // Every refusal leaves the user and the activity list as they were.
  const refusals: [string, (userId: string) => Promise<Json>, RegExp, string[]][] = [
    [
      "a token for another address",
      async (userId) => ({ userId, userEmail: email(), verificationToken: (await mintVerificationToken(h(), { contact: email() })).token }),
      /different email address/,
      ["parameters.verificationToken"],
    ],
    [
      "an SMS token",
      async (userId) => ({
        userId,
        userEmail: email(),
        verificationToken: (await mintVerificationToken(h(), { contact: "+14155550142", type: "OTP_TYPE_SMS" })).token,
      }),
      /does not verify an email address/,
      ["parameters.verificationToken"],
    ],
    [
      "an expired token",
      async (userId) => {
        const e = email();
        return { userId, userEmail: e, verificationToken: (await mintVerificationToken(h(), { contact: e, lifetimeSeconds: -1 })).token };
      },
      /expired/,
      ["parameters.verificationToken"],
    ],
    [
      "a token issued by an unrelated organization",
      async (userId) => {
        const e = email();
        const other = await h().newOrg();
        return {
          userId,
          userEmail: e,
          verificationToken: (await mintVerificationToken(h(), { organizationId: other.organizationId, contact: e })).token,
        };
      },
      /not .* or one of its parents/,
      ["parameters.verificationToken"],
    ],
    [
      "a forged token",
      async (userId) => {
        const e = email();
        const { token } = await mintVerificationToken(h(), { contact: e });
        return { userId, userEmail: e, verificationToken: token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA") };
      },
      /signature/,
      ["parameters.verificationToken"],
    ],
    [
      "a token bound to another key (someone else's token, without its key)",
      async (userId) => {
        const e = email();
        return { userId, userEmail: e, verificationToken: (await mintVerificationToken(h(), { contact: e })).token };
      },
      /must be stamped by the key the verification token is bound to/,
      ["parameters.verificationToken"],
    ],
    [
      "a token its owner has logged in with",
      async (userId) => {
        const e = email();
        const t = await rootToken(h(), { contact: e });
        await h()
          .service.store.db.updateTable("verification_tokens")
          .set({ login_used_at: Date.now() })
          .where("id", "=", t.claims.id)
          .execute();
        return { userId, userEmail: e, verificationToken: t.token };
      },
      /already been used to log in/,
      ["parameters.verificationToken"],
    ],
    [
      "a token that was already bound",
      async (userId) => {
        const e = email();
        const { token } = await rootToken(h(), { contact: e });
        completed(await h().submit(OP, TYPE, { userId: await newUser(h()), userEmail: e, verificationToken: token }), updateUserEmail);
        return { userId, userEmail: e.toUpperCase(), verificationToken: token };
      },
      /already been used/,
      ["parameters.verificationToken"],
    ],
    [
      "a token with an empty address",
      async (userId) => ({ userId, userEmail: "", verificationToken: (await mintVerificationToken(h(), { contact: email() })).token }),
      /omit it when removing/,
      ["parameters.verificationToken"],
    ],
    ["a bad address", async (userId) => ({ userId, userEmail: "not-an-email" }), /valid email/, ["parameters.userEmail"]],
    ["a missing address", async (userId) => ({ userId }), /userEmail/, ["parameters.userEmail"]],
    ["a bad user id", async () => ({ userId: "nope", userEmail: email() }), /user id/, ["parameters.userId"]],
  ];
  for (const [what, params, message, fields] of refusals) {
    it(`refuses ${what} (400); nothing changes`, async () => {
      const before = email();
      const userId = await newUser(h(), { userEmail: before });
      const p = await params(userId);
      const last = await newestActivity(h());
      invalidRequest(await h().submit(OP, TYPE, p), message, fields);
      assert.equal(await newestActivity(h()), last);
      assert.deepEqual({ ...(await row(h(), userId)), updated_at: 0 }, { email: before, email_verified_at: null, updated_at: 0 });
    });
  }

  it("an unknown user is 404", async () => {
    notFound(await h().submit(OP, TYPE, { userId: MISSING, userEmail: email() }), /no user/);
  });

  it("taking another user's email (any case) is 409, with or without a token", async () => {
    const taken = email();
    await newUser(h(), { userEmail: taken });
    const userId = await newUser(h());
    conflict(await h().submit(OP, TYPE, { userId, userEmail: taken.toUpperCase() }), /email already exists/);
    const { token, claims } = await rootToken(h(), { contact: taken });
    conflict(await h().submit(OP, TYPE, { userId, userEmail: taken, verificationToken: token }), /email already exists/);
    // The conflict undid the token's binding with everything else.
    const t = await h()
      .service.store.db.selectFrom("verification_tokens")
      .select("signup_used_at")
      .where("id", "=", claims.id)
      .executeTakeFirstOrThrow();
    assert.equal(t.signup_used_at, null);
    assert.equal((await row(h(), userId)).email, null);
  });

  it("is governed by policies: a non-root user without a policy may not change another user's (or its own) email (403)", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    forbidden(await h().submit(OP, TYPE, { userId: b!.userId, userEmail: email() }, { as: a }));
    forbidden(await h().submit(OP, TYPE, { userId: a!.userId, userEmail: email() }, { as: a }));
    assert.equal((await row(h(), b!.userId)).email, null);
    // A policy on the kind allows it.
    completed(
      await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        policyName: `email-${Date.now()}`,
        effect: "EFFECT_ALLOW",
        condition: "activity.resource == 'USER' && activity.action == 'UPDATE' && activity.kind == 'UPDATE_USER_EMAIL'",
        consensus: `approvers.any(user, user.id == '${a!.userId}')`,
        notes: "",
      }),
      "createPolicyResult",
    );
    const address = email();
    completed(await h().submit(OP, TYPE, { userId: b!.userId, userEmail: address }, { as: a }), updateUserEmail);
    assert.equal((await row(h(), b!.userId)).email, address);
  });
});
