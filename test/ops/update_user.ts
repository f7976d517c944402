import { it } from "node:test";
import assert from "node:assert/strict";
import {
  assertIdempotent,
  completed,
  conflict,
  invalidRequest,
  notFound,
  onSqlite,
  perEngine,
  userParams,
  type Json,
} from "../helpers/inproc.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";
import { updateUser } from "../../src/activities/users/update_user.ts";
import { updateUserEmail } from "../../src/activities/users/update_user_email.ts";

const OP = "update_user";
const TYPE = "ACTIVITY_TYPE_UPDATE_USER";
const MISSING = "00000000-0000-4000-8000-000000000000";

async function newUser(h: () => import("../helpers/inproc.ts").Harness, over: Json = {}): Promise<string> {
  return completed(await h().submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [userParams(over)] }), "createUsersResult")
    .userIds[0];
}
const tag = async (h: () => import("../helpers/inproc.ts").Harness, name: string) =>
  completed(await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: name, userIds: [] }), createUserTag)
    .userTagId as string;

onSqlite("update_user", (h) => {
  it("updates name, email and phone; absent fields are kept; userTagIds replaces the tag set", async () => {
    const [t1, t2] = [await tag(h, "t1"), await tag(h, "t2")];
    const userId = await newUser(h, { userName: "before", userEmail: "b@example.com", userTags: [t1] });
    const res = await h().submit(OP, TYPE, { userId, userName: "after", userPhoneNumber: "+14155550100", userTagIds: [t2] });
    assert.deepEqual(completed(res, updateUser), { userId });
    const { user } = (await h().query("get_user", { userId })).json;
    assert.equal(user.userName, "after");
    assert.equal(user.userEmail, "b@example.com");
    assert.equal(user.userPhoneNumber, "+14155550100");
    assert.deepEqual(user.userTags, [t2]);
  });

  it('"" clears email and phone; an empty userTagIds clears the tags', async () => {
    const t = await tag(h, "clear-me");
    const userId = await newUser(h, { userEmail: "c@example.com", userPhoneNumber: "+14155550101", userTags: [t] });
    completed(await h().submit(OP, TYPE, { userId, userEmail: "", userPhoneNumber: "", userTagIds: [] }), updateUser);
    const { user } = (await h().query("get_user", { userId })).json;
    assert.ok(!user.userEmail, JSON.stringify(user));
    assert.ok(!user.userPhoneNumber, JSON.stringify(user));
    assert.deepEqual(user.userTags, []);
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { userId: await newUser(h), userName: "idem" });
  });

  const refused: [string, () => Promise<Json>, RegExp, string[]?][] = [
    ["nothing to update", async () => ({ userId: await newUser(h) }), /nothing to update/],
    ["a bad user id", async () => ({ userId: "nope", userName: "x" }), /user id/, ["parameters.userId"]],
    ["a bad email", async () => ({ userId: await newUser(h), userEmail: "x" }), /valid email/, ["parameters.userEmail"]],
    ["a bad phone number", async () => ({ userId: await newUser(h), userPhoneNumber: "12" }), /E.164/, ["parameters.userPhoneNumber"]],
    ["a blank name", async () => ({ userId: await newUser(h), userName: "" }), /userName/, ["parameters.userName"]],
    ["an unknown tag", async () => ({ userId: await newUser(h), userTagIds: [MISSING] }), /no user tag/, ["parameters.userTagIds"]],
  ];
  for (const [what, params, message, fields] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, await params()), message, fields);
    });
  }

  it("an unknown user is 404", async () => {
    notFound(await h().submit(OP, TYPE, { userId: MISSING, userName: "x" }), /no user/);
  });
});

perEngine("update_user uniqueness", (h) => {
  it("taking another user's email (any case) is 409", async () => {
    await newUser(h, { userEmail: "taken@example.com" });
    const userId = await newUser(h);
    conflict(await h().submit(OP, TYPE, { userId, userEmail: "TAKEN@example.com" }), /email already exists/);
  });
});

perEngine("update_user and verified contacts", (h) => {
  it("a contact changed through update_user is no longer verified (only a token verifies one)", async () => {
    const { mintVerificationToken } = await import("../helpers/tokens.ts");
    const address = `v-${Date.now()}@example.com`;
    const userId = await newUser(h);
    // Bound to the root key, which stamps the update (docs/login-lookups.md §4).
    const { token } = await mintVerificationToken(h(), { contact: address, boundTo: h().root.key.publicKey });
    completed(
      await h().submit("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL", { userId, userEmail: address, verificationToken: token }),
      updateUserEmail,
    );
    const verified = () =>
      h()
        .service.store.db.selectFrom("users")
        .select(["email_verified_at", "phone_verified_at"])
        .where("id", "=", userId)
        .executeTakeFirstOrThrow();
    assert.ok((await verified()).email_verified_at);
    completed(await h().submit(OP, TYPE, { userId, userEmail: `other-${address}` }), updateUser);
    assert.equal((await verified()).email_verified_at, null);
  });
});
