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
import { updateUserName } from "../../src/activities/users/update_user_name.ts";

const OP = "update_user_name";
const TYPE = "ACTIVITY_TYPE_UPDATE_USER_NAME";
const MISSING = "00000000-0000-4000-8000-000000000000";

const newUser = async (h: Harness, over: Json = {}): Promise<string> =>
  completed(await h.submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [userParams(over)] }), "createUsersResult").userIds[0];
const nameOf = async (h: Harness, userId: string) => (await h.query("get_user", { userId })).json.user.userName as string;

perEngine("update_user_name", (h) => {
  it("renames a user; nothing else changes", async () => {
    const userId = await newUser(h(), { userName: "before", userEmail: "name@example.com" });
    const res = await h().submit(OP, TYPE, { userId, userName: "after" });
    assert.deepEqual(completed(res, updateUserName), { userId });
    assert.deepEqual(res.json.activity.intent.updateUserNameIntent, { userId, userName: "after" });
    const { user } = (await h().query("get_user", { userId })).json;
    assert.equal(user.userName, "after");
    assert.equal(user.userEmail, "name@example.com");
    assert.notDeepEqual(user.updatedAt, user.createdAt);
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { userId: await newUser(h()), userName: "idem" });
  });

  const refused: [string, (userId: string) => Json, RegExp, string][] = [
    ["a blank name", (userId) => ({ userId, userName: "  " }), /userName/, "parameters.userName"],
    ["an empty name", (userId) => ({ userId, userName: "" }), /userName/, "parameters.userName"],
    ["a name over 256 characters", (userId) => ({ userId, userName: "n".repeat(257) }), /userName/, "parameters.userName"],
    ["no name", (userId) => ({ userId }), /userName/, "parameters.userName"],
    ["a bad user id", () => ({ userId: "nope", userName: "x" }), /user id/, "parameters.userId"],
  ];
  for (const [what, params, message, field] of refused) {
    it(`refuses ${what} (400); the name is kept`, async () => {
      const userId = await newUser(h(), { userName: "kept" });
      invalidRequest(await h().submit(OP, TYPE, params(userId)), message, [field]);
      assert.equal(await nameOf(h(), userId), "kept");
    });
  }

  it("an unknown user is 404", async () => {
    notFound(await h().submit(OP, TYPE, { userId: MISSING, userName: "x" }), /no user/);
  });

  it("a non-root user without a policy may not rename another user (403); root may", async () => {
    const [a, b] = await addUsersWithKeys(h(), 2);
    const before = await nameOf(h(), b!.userId);
    forbidden(await h().submit(OP, TYPE, { userId: b!.userId, userName: "hijacked" }, { as: a }));
    assert.equal(await nameOf(h(), b!.userId), before);
    completed(await h().submit(OP, TYPE, { userId: b!.userId, userName: "by-root" }), updateUserName);
    assert.equal(await nameOf(h(), b!.userId), "by-root");
  });
});
