import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, onSqlite } from "../helpers/inproc.ts";
import { subOrganization } from "../helpers/sub-organizations.ts";

const OP = "get_organization";

onSqlite("get_organization", (h) => {
  it("answers v1OrganizationData: name, users, policies, wallets, private keys, tags, root quorum and features", async () => {
    const sub = await subOrganization(h(), { subOrganizationName: "Shop of Alice" });
    const wallet = completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "main", accounts: [] }, { as: sub }),
      "createWalletResult",
    );
    const tag = completed(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "owners", userIds: [sub.userId] }, { as: sub }),
      "createUserTagResult",
    );
    const policy = {
      policyName: "p",
      effect: "EFFECT_ALLOW",
      condition: "activity.type == 'ACTIVITY_TYPE_CREATE_WALLET'",
      consensus: "true",
      notes: "",
    };
    const created = completed(
      await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", policy, { as: sub }),
      "createPolicyResult",
    );
    const { organizationData: o } = (await h().query(OP, {}, { as: sub })).json;
    assert.equal(o.organizationId, sub.organizationId);
    assert.equal(o.name, "Shop of Alice");
    assert.deepEqual(
      o.users.map((u: { userId: string }) => u.userId),
      [sub.userId],
    );
    assert.deepEqual(
      o.policies.map((p: { policyId: string }) => p.policyId),
      [created.policyId],
    );
    assert.deepEqual(
      o.wallets.map((w: { walletId: string }) => w.walletId),
      [wallet.walletId],
    );
    assert.deepEqual(
      o.tags.map((t: { tagId: string; tagType: string }) => [t.tagId, t.tagType]),
      [[tag.userTagId, "TAG_TYPE_USER"]],
    );
    assert.deepEqual(o.rootQuorum, { threshold: 1, userIds: [sub.userId] });
    assert.deepEqual(o.privateKeys, []);
    assert.deepEqual(o.invitations, []);
    assert.ok(o.features.some((f: { name: string }) => f.name === "FEATURE_NAME_OTP_EMAIL_AUTH"));
    // Its parent reads it too (parents read their sub-organizations).
    assert.equal((await h().query(OP, {}, { organizationId: sub.organizationId })).json.organizationData.name, "Shop of Alice");
  });

  it("refuses an organizationId that is not a UUID (400)", async () => {
    invalidRequest(await h().query(OP, {}, { organizationId: "not-an-id" }), /organization id/, ["organizationId"]);
  });
});
