import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, invalidRequest, notFound, onSqlite } from "../helpers/inproc.ts";

onSqlite("get_api_keys", (h) => {
  it("lists the organization's keys, or one user's", async () => {
    const org = await h().newOrg();
    const [u] = await addUsersWithKeys(h(), 1, org);
    const all = (await h().query("get_api_keys", {}, { as: org })).json.apiKeys.map(
      (k: { credential: { publicKey: string } }) => k.credential.publicKey,
    );
    assert.deepEqual([...all].sort(), [org.key.publicKey, u!.key.publicKey].sort());
    const mine = (await h().query("get_api_keys", { userId: u!.userId }, { as: org })).json.apiKeys;
    assert.deepEqual(
      mine.map((k: { credential: { publicKey: string } }) => k.credential.publicKey),
      [u!.key.publicKey],
    );
  });

  it("an unknown user is 404; a malformed user id is 400", async () => {
    notFound(await h().query("get_api_keys", { userId: "00000000-0000-4000-8000-000000000000" }), /no user/);
    invalidRequest(await h().query("get_api_keys", { userId: "u" }), /user id/, ["userId"]);
  });
});
