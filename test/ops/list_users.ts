import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, onSqlite } from "../helpers/inproc.ts";

onSqlite("list_users", (h) => {
  it("lists every user of the organization, and only of it; a parent reads its sub-organization's", async () => {
    const org = await h().newOrg();
    const added = await addUsersWithKeys(h(), 2, org);
    const ids = (await h().query("list_users", {}, { as: org })).json.users.map((u: { userId: string }) => u.userId);
    assert.deepEqual([...ids].sort(), [org.userId, ...added.map((u) => u.userId)].sort());
    const sub = completed(
      await h().submit(
        "create_sub_organization",
        "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
        {
          subOrganizationName: "s",
          rootQuorumThreshold: 1,
          rootUsers: [{ userName: "only", apiKeys: [], authenticators: [], oauthProviders: [] }],
        },
        { as: org },
      ),
      "createSubOrganizationResultV8",
    );
    const inSub = (await h().query("list_users", {}, { as: org, organizationId: sub.subOrganizationId })).json.users;
    assert.deepEqual(
      inSub.map((u: { userId: string; userName: string }) => [u.userId, u.userName]),
      [[sub.rootUserIds[0], "only"]],
    );
  });
});
