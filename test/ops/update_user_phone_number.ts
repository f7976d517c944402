import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  forbidden,
  invalidRequest,
  notFound,
  perEngine,
  userParams,
  type Harness,
  type Json,
} from "../helpers/inproc.ts";
import { mintVerificationToken } from "../helpers/tokens.ts";
import { updateUserPhoneNumber } from "../../src/activities/users/update_user_phone_number.ts";

const OP = "update_user_phone_number";
const TYPE = "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER";
const MISSING = "00000000-0000-4000-8000-000000000000";

const newUser = async (h: Harness, over: Json = {}): Promise<string> =>
  completed(await h.submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [userParams(over)] }), "createUsersResult").userIds[0];
const row = (h: Harness, userId: string) =>
  h.service.store.db.selectFrom("users").select(["phone", "phone_verified_at"]).where("id", "=", userId).executeTakeFirstOrThrow();
const newestActivity = async (h: Harness) =>
  (await h.query("list_activities", { paginationOptions: { limit: "1" } })).json.activities[0]?.id as string;
let n = 0;
const phone = () => `+1415555${String(1000 + (++n % 9000)).padStart(4, "0")}`;
// Bound to the root key, which stamps the updates: a token is accepted only from its own key
// (docs/login-lookups.md §4).
const sms = (h: Harness, contact: string, over: Json = {}) =>
  mintVerificationToken(h, { contact, type: "OTP_TYPE_SMS", boundTo: h.root.key.publicKey, ...over });

perEngine("update_user_phone_number", (h) => {
  it("with an SMS token proving the new number, the number is set and verified", async () => {
    const userId = await newUser(h());
    const number = phone();
    const { token } = await sms(h(), number);
    const res = await h().submit(OP, TYPE, { userId, userPhoneNumber: number, verificationToken: token });
    assert.deepEqual(completed(res, updateUserPhoneNumber), { userId });
    const r = await row(h(), userId);
    assert.equal(r.phone, number);
    assert.ok(Number(r.phone_verified_at) > 0);
    assert.equal((await h().query("get_user", { userId })).json.user.userPhoneNumber, number);
  });

  it('without a token the number is set unverified; "" removes it', async () => {
    const number = phone();
    const userId = await newUser(h());
    completed(
      await h().submit(OP, TYPE, { userId, userPhoneNumber: number, verificationToken: (await sms(h(), number)).token }),
      updateUserPhoneNumber,
    );
    completed(await h().submit(OP, TYPE, { userId, userPhoneNumber: number }), updateUserPhoneNumber);
    assert.deepEqual(await row(h(), userId), { phone: number, phone_verified_at: null });
    completed(await h().submit(OP, TYPE, { userId, userPhoneNumber: "" }), updateUserPhoneNumber);
    assert.deepEqual(await row(h(), userId), { phone: null, phone_verified_at: null });
    assert.equal((await h().query("get_user", { userId })).json.user.userPhoneNumber, undefined);
  });

  it("two users may share a number (no uniqueness), each verified by its own token", async () => {
    const number = phone();
    const [a, b] = [await newUser(h()), await newUser(h())];
    for (const userId of [a, b])
      completed(
        await h().submit(OP, TYPE, { userId, userPhoneNumber: number, verificationToken: (await sms(h(), number)).token }),
        updateUserPhoneNumber,
      );
    assert.ok((await row(h(), a)).phone_verified_at && (await row(h(), b)).phone_verified_at);
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { userId: await newUser(h()), userPhoneNumber: phone() });
  });

  const refusals: [string, (userId: string) => Promise<Json>, RegExp, string[]][] = [
    [
      "a token for another number",
      async (userId) => ({ userId, userPhoneNumber: phone(), verificationToken: (await sms(h(), "+442071838750")).token }),
      /different phone number/,
      ["parameters.verificationToken"],
    ],
    [
      "an email token",
      async (userId) => ({
        userId,
        userPhoneNumber: phone(),
        verificationToken: (await mintVerificationToken(h(), { contact: "p@example.com" })).token,
      }),
      /does not verify a phone number/,
      ["parameters.verificationToken"],
    ],
    [
      "an expired token",
      async (userId) => {
        const p = phone();
        return { userId, userPhoneNumber: p, verificationToken: (await sms(h(), p, { lifetimeSeconds: -1 })).token };
      },
      /expired/,
      ["parameters.verificationToken"],
    ],
    [
      "a token of an unrelated organization",
      async (userId) => {
        const p = phone();
        const o = await h().newOrg();
        return { userId, userPhoneNumber: p, verificationToken: (await sms(h(), p, { organizationId: o.organizationId })).token };
      },
      /not .* or one of its parents/,
      ["parameters.verificationToken"],
    ],
    [
      "a token bound to another key (someone else's token, without its key)",
      async (userId) => {
        const p = phone();
        return {
          userId,
          userPhoneNumber: p,
          verificationToken: (await mintVerificationToken(h(), { contact: p, type: "OTP_TYPE_SMS" })).token,
        };
      },
      /must be stamped by the key the verification token is bound to/,
      ["parameters.verificationToken"],
    ],
    ["a number that is not E.164", async (userId) => ({ userId, userPhoneNumber: "4155550100" }), /E.164/, ["parameters.userPhoneNumber"]],
    [
      "a token with an empty number",
      async (userId) => ({ userId, userPhoneNumber: "", verificationToken: (await sms(h(), phone())).token }),
      /omit it when removing/,
      ["parameters.verificationToken"],
    ],
  ];
  for (const [what, params, message, fields] of refusals) {
    it(`refuses ${what} (400); nothing changes`, async () => {
      const before = phone();
      const userId = await newUser(h(), { userPhoneNumber: before });
      const p = await params(userId);
      const last = await newestActivity(h());
      invalidRequest(await h().submit(OP, TYPE, p), message, fields);
      assert.equal(await newestActivity(h()), last);
      assert.deepEqual(await row(h(), userId), { phone: before, phone_verified_at: null });
    });
  }

  it("an unknown user is 404", async () => {
    notFound(await h().submit(OP, TYPE, { userId: MISSING, userPhoneNumber: phone() }), /no user/);
  });

  it("a non-root user without a policy may not change another user's number (403)", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    forbidden(await h().submit(OP, TYPE, { userId: b!.userId, userPhoneNumber: phone() }, { as: a }));
    assert.deepEqual(await row(h(), b!.userId), { phone: null, phone_verified_at: null });
  });
});
