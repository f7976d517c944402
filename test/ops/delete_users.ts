import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  failsWith,
  invalidRequest,
  notFound,
  onSqlite,
  precondition,
  userParams,
} from "../helpers/inproc.ts";
import { createUsersV4 } from "../../src/activities/users/create_users.ts";
import { deleteUsers } from "../../src/activities/users/delete_users.ts";

const OP = "delete_users";
const TYPE = "ACTIVITY_TYPE_DELETE_USERS";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("delete_users", (h) => {
  it("deletes users and their keys: their credentials stop working", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    const res = await h().submit(OP, TYPE, { userIds: [u!.userId, u!.userId] });
    assert.deepEqual(completed(res, deleteUsers), { userIds: [u!.userId] });
    notFound(await h().query("get_user", { userId: u!.userId }));
    failsWith(await h().query("whoami", {}, { as: u }), 401, 16, "PUBLIC_KEY_NOT_FOUND");
  });

  it("the same body twice is one activity", async () => {
    const { userIds } = completed(
      await h().submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [userParams()] }),
      createUsersV4,
    );
    await assertIdempotent(h(), OP, TYPE, { userIds });
  });

  it("refuses root quorum members (400, FAILED_PRECONDITION)", async () => {
    precondition(await h().submit(OP, TYPE, { userIds: [h().root.userId] }), /root quorum/);
  });

  it("one unknown user fails the whole activity (404) and deletes nobody", async () => {
    const [u] = await addUsersWithKeys(h(), 1);
    notFound(await h().submit(OP, TYPE, { userIds: [u!.userId, MISSING] }), new RegExp(MISSING));
    assert.equal((await h().query("get_user", { userId: u!.userId })).status, 200);
  });

  for (const [what, userIds, message] of [
    ["no ids", [], /userIds must hold 1 to 100/],
    ["more than 100 ids", Array.from({ length: 101 }, () => MISSING), /1 to 100/],
    ["a malformed id", ["x"], /user id/],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, { userIds }), message, ["parameters.userIds" + (what === "a malformed id" ? "[0]" : "")]);
    });
  }
});
