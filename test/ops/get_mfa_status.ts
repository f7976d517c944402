// get_mfa_status, and the MFA gate it reports on (docs/mfa.md §3): a submission that matches
// its submitter's MFA policy waits at ACTIVITY_STATUS_AUTHENTICATORS_NEEDED until approvals
// stamped by the required credentials meet every step, then is decided like any vote.
import { it } from "node:test";
import assert from "node:assert/strict";
import {
  completed,
  forbidden,
  invalidRequest,
  notFound,
  perEngine,
  precondition,
  twoOfTwo,
  userParams,
  type Json,
} from "../helpers/inproc.ts";
import { TEST_WEBAUTHN } from "../helpers/webauthn.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";
import { addMfaPolicy, approveWithKey, approveWithPasskey, passkeyOf, secondKey, step, waiting } from "../helpers/mfa.ts";
import { literalList } from "../helpers/policy-facts.ts";

const OP = "get_mfa_status";
const TAG = "ACTIVITY_TYPE_CREATE_USER_TAG";
const ON_TAGS = "activity.type == 'ACTIVITY_TYPE_CREATE_USER_TAG'";
const logins = { ...DEFAULT_LOGIN_SETTINGS, webauthn: TEST_WEBAUTHN };

perEngine(
  "get_mfa_status and the MFA gate",
  (h) => {
    const tagNames = async (as = h().root) =>
      ((await h().query("list_user_tags", {}, { as })).json.userTags as Json[]).map((t) => t.tagName as string);

    it("a condition cut short by its evaluation budget counts as holding: MFA fails closed (docs/policy-language.md §11.1)", async () => {
      const org = await h().newOrg("mfa budget");
      const second = await secondKey(h(), org);
      // False when evaluated in full (no a is 1000), but 99,900 iterations of it are past one evaluation's budget.
      const condition = `${literalList(100)}.all(a, ${literalList(999)}.all(b, a == 1000 && b == 1000))`;
      await addMfaPolicy(h(), org, {
        condition,
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_API_KEY", id: second.apiKeyId })],
      });
      waiting(await h().submit("create_user_tag", TAG, { userTagName: "budget-held", userIds: [] }, { as: org }));
      assert.ok(!(await tagNames(org)).includes("budget-held"), "nothing ran");
    });

    it("an API key step: the submission waits, the status says what is owed; the named key's approval completes it", async () => {
      const org = await h().newOrg("mfa api key");
      const second = await secondKey(h(), org);
      const policyId = await addMfaPolicy(h(), org, {
        condition: ON_TAGS,
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_API_KEY", id: second.apiKeyId })],
      });
      const activity = waiting(await h().submit("create_user_tag", TAG, { userTagName: "held", userIds: [] }, { as: org }));
      assert.deepEqual(activity.result, {});
      assert.deepEqual(
        activity.votes[0].user.mfaPolicies.map((p: Json) => p.mfaPolicyId),
        [policyId],
        "the voter carries its MFA policies",
      );
      assert.ok(!(await tagNames(org)).includes("held"), "nothing ran");
      const status = (await h().query(OP, { activityId: activity.id }, { as: org })).json.mfaStatuses as Json[];
      assert.deepEqual(status, [
        {
          mfaPolicyId: policyId,
          userId: org.userId,
          satisfied: false,
          satisfiedMethods: [],
          requiredMethods: [{ any: [{ type: "AUTHENTICATION_TYPE_API_KEY", id: second.apiKeyId }] }],
        },
      ]);
      // Why it waits: the evaluation record's final outcome.
      const evals = (await h().query("get_policy_evaluations", { activityId: activity.id }, { as: org })).json.policyEvaluations as Json[];
      const finals = evals.map((e) => (e.policyEvaluations as Json[]).find((p) => p.policyId === undefined)?.outcome);
      assert.deepEqual(finals, ["OUTCOME_REQUIRES_AUTHENTICATORS"]);
      // The submitting key again meets nothing: 400, nothing recorded.
      precondition(await approveWithKey(h(), org, activity.fingerprint), /meets none of the steps/);
      const done = await approveWithKey(h(), second, activity.fingerprint);
      assert.equal(done.status, 200, JSON.stringify(done.json));
      assert.equal(done.json.activity.status, "ACTIVITY_STATUS_COMPLETED");
      assert.ok((await tagNames(org)).includes("held"));
      const after = (await h().query(OP, { activityId: activity.id, userId: org.userId }, { as: org })).json.mfaStatuses as Json[];
      assert.equal(after[0]!.satisfied, true);
      assert.deepEqual(after[0]!.satisfiedMethods, [{ type: "AUTHENTICATION_TYPE_API_KEY", id: second.apiKeyId }]);
      const evals2 = (await h().query("get_policy_evaluations", { activityId: activity.id }, { as: org })).json.policyEvaluations as Json[];
      assert.deepEqual(
        evals2.map((e) => (e.policyEvaluations as Json[]).find((p) => p.policyId === undefined)?.outcome),
        ["OUTCOME_REQUIRES_AUTHENTICATORS", "OUTCOME_ALLOW"],
      );
    });

    it("the submitting credential meets the first step of its kind; a passkey stamp meets the next", async () => {
      const org = await h().newOrg("mfa passkey");
      const { passkey, authenticatorId } = await passkeyOf(h(), org);
      await addMfaPolicy(h(), org, {
        condition: ON_TAGS,
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_API_KEY" }), step({ type: "AUTHENTICATION_TYPE_PASSKEY" })],
      });
      const activity = waiting(await h().submit("create_user_tag", TAG, { userTagName: "pk", userIds: [] }, { as: org }));
      const [status] = (await h().query(OP, { activityId: activity.id }, { as: org })).json.mfaStatuses as Json[];
      assert.deepEqual(
        status!.satisfiedMethods.map((m: Json) => m.type),
        ["AUTHENTICATION_TYPE_API_KEY"],
      );
      const done = await approveWithPasskey(h(), passkey, activity.fingerprint, org.organizationId);
      assert.equal(done.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(done.json));
      const [after] = (await h().query(OP, { activityId: activity.id }, { as: org })).json.mfaStatuses as Json[];
      assert.deepEqual(
        after!.satisfiedMethods.map((m: Json) => m.type),
        ["AUTHENTICATION_TYPE_API_KEY", "AUTHENTICATION_TYPE_PASSKEY"],
      );
      assert.equal(after!.satisfiedMethods[1].id, authenticatorId);
      // A submission the credential meets entirely does not wait.
      await addMfaPolicy(h(), org, {
        condition: "activity.type == 'ACTIVITY_TYPE_DELETE_USER_TAGS'",
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_API_KEY" })],
      });
      const tag = ((await h().query("list_user_tags", {}, { as: org })).json.userTags as Json[]).find((t) => t.tagName === "pk")!;
      completed(
        await h().submit("delete_user_tags", "ACTIVITY_TYPE_DELETE_USER_TAGS", { userTagIds: [tag.tagId] }, { as: org }),
        "deleteUserTagsResult",
      );
    });

    it("only the submitter stamps: another user of the organization is refused (403); a parent's credential in a sub-organization is refused", async () => {
      const org = await h().newOrg("mfa others");
      const second = await secondKey(h(), org);
      await addMfaPolicy(h(), org, {
        condition: ON_TAGS,
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_API_KEY", id: second.apiKeyId })],
      });
      const activity = waiting(await h().submit("create_user_tag", TAG, { userTagName: "mine", userIds: [] }, { as: org }));
      const stranger = (await h().submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [] }, { as: org })).status;
      assert.equal(stranger, 400); // (sanity: create_users needs users; the policy does not touch it)
      const other = await h().newOrg("another tenant");
      const cross = await approveWithKey(h(), other, activity.fingerprint, org.organizationId);
      assert.ok(cross.status >= 400 && cross.status < 500, JSON.stringify(cross.json));
      // A sub-organization whose root user has an MFA policy; the parent's key cannot meet its step.
      const subKey = await import("../../src/crypto/keygen.ts").then((m) => m.generateP256KeyPair());
      const sub = completed(
        await h().submit(
          "create_sub_organization",
          "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
          {
            subOrganizationName: "child",
            rootQuorumThreshold: 1,
            rootUsers: [
              {
                userName: "child root",
                apiKeys: [{ apiKeyName: "k", publicKey: subKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
                authenticators: [],
                oauthProviders: [],
              },
            ],
          },
          { as: org },
        ),
        "createSubOrganizationResultV8",
      );
      const child = { organizationId: sub.subOrganizationId as string, userId: (sub.rootUserIds as string[])[0]!, key: subKey };
      await addMfaPolicy(h(), child, {
        condition: ON_TAGS,
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_API_KEY" }), step({ type: "AUTHENTICATION_TYPE_API_KEY" })],
      });
      const held = waiting(await h().submit("create_user_tag", TAG, { userTagName: "child", userIds: [] }, { as: child }));
      const byParent = await approveWithKey(h(), org, held.fingerprint, child.organizationId);
      assert.ok(byParent.status >= 400 && byParent.status < 500, JSON.stringify(byParent.json));
      const [status] = (await h().query(OP, { activityId: held.id }, { as: child })).json.mfaStatuses as Json[];
      assert.equal(status!.satisfiedMethods.length, 1, "the parent's stamp met nothing");
      // A user of the organization who owes nothing: 403.
      const [u] = await import("../helpers/inproc.ts").then((m) => m.addUsersWithKeys(h(), 1, child));
      forbidden(await approveWithKey(h(), u!, held.fingerprint), /owes it none/);
    });

    it("an activity that prepares work outside the database (create_users) runs when the last step is met", async () => {
      const org = await h().newOrg("mfa prepare");
      const second = await secondKey(h(), org);
      await addMfaPolicy(h(), org, {
        condition: "activity.type == 'ACTIVITY_TYPE_CREATE_USERS_V4'",
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_API_KEY", id: second.apiKeyId })],
      });
      const activity = waiting(
        await h().submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [userParams({ userName: "held user" })] }, { as: org }),
      );
      const done = await approveWithKey(h(), second, activity.fingerprint);
      assert.equal(done.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(done.json));
      const users = (await h().query("list_users", {}, { as: org })).json.users as Json[];
      assert.ok(users.some((u) => u.userName === "held user"));
    });

    it("an approver's own MFA holds its approval: it counts once the approver's steps are met", async () => {
      const { a, b } = await twoOfTwo(h());
      const b2 = await secondKey(h(), b);
      // In a 2-of-2 organization the MFA policy itself needs both root users.
      const proposed = await h().submit(
        "create_mfa_policy",
        "ACTIVITY_TYPE_CREATE_MFA_POLICY",
        {
          userId: b.userId,
          mfaPolicyName: "b's second key",
          condition: ON_TAGS,
          order: 0,
          requiredAuthenticationMethods: [
            step({ type: "AUTHENTICATION_TYPE_API_KEY" }),
            step({ type: "AUTHENTICATION_TYPE_API_KEY", id: b2.apiKeyId }),
          ],
        },
        { as: b },
      );
      completed(await approveWithKey(h(), a, proposed.json.activity.fingerprint), "createMfaPolicyResult");
      const res = await h().submit("create_user_tag", TAG, { userTagName: "quorum", userIds: [] }, { as: a });
      assert.equal(res.json.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");
      const fingerprint = res.json.activity.fingerprint as string;
      const first = await approveWithKey(h(), b, fingerprint);
      assert.equal(first.json.activity?.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED", JSON.stringify(first.json));
      const [held] = (await h().query(OP, { activityId: res.json.activity.id, userId: b.userId }, { as: a })).json.mfaStatuses as Json[];
      assert.equal(held!.satisfied, false);
      assert.equal(held!.satisfiedMethods.length, 1);
      // The same key again meets nothing (400); the approval still does not count.
      precondition(await approveWithKey(h(), b, fingerprint), /meets none/);
      const done = await approveWithKey(h(), b2, fingerprint);
      assert.equal(done.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(done.json));
      assert.ok((await tagNames(a)).includes("quorum"));
    });

    it("the submitter's rejection cancels a waiting activity", async () => {
      const org = await h().newOrg("mfa reject");
      const second = await secondKey(h(), org);
      await addMfaPolicy(h(), org, {
        condition: ON_TAGS,
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_API_KEY", id: second.apiKeyId })],
      });
      const activity = waiting(await h().submit("create_user_tag", TAG, { userTagName: "cancelled", userIds: [] }, { as: org }));
      const res = await h().submit("reject_activity", "ACTIVITY_TYPE_REJECT_ACTIVITY", { fingerprint: activity.fingerprint }, { as: org });
      assert.equal(res.json.activity?.status, "ACTIVITY_STATUS_REJECTED", JSON.stringify(res.json));
      invalidRequest(await approveWithKey(h(), second, activity.fingerprint), /already voted/);
      assert.ok(!(await tagNames(org)).includes("cancelled"));
    });

    it("one organization's MFA policies never hold another's activities; a denied activity is refused, not held", async () => {
      const a = await h().newOrg("mfa A");
      const b = await h().newOrg("mfa B");
      await addMfaPolicy(h(), a, { condition: "true", requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_PASSKEY" })] });
      completed(await h().submit("create_user_tag", TAG, { userTagName: "free", userIds: [] }, { as: b }), "createUserTagResult");
      // A non-root user of A without any policy allowing it: denied (403), MFA or not.
      const [u] = await import("../helpers/inproc.ts").then((m) => m.addUsersWithKeys(h(), 1, b));
      await addMfaPolicy(h(), b, {
        userId: u!.userId,
        condition: "true",
        requiredAuthenticationMethods: [step({ type: "AUTHENTICATION_TYPE_PASSKEY" })],
      });
      forbidden(await h().submit("create_user_tag", TAG, { userTagName: "denied", userIds: [] }, { as: u! }));
    });

    it("an unknown activity, or one of another organization, is 404", async () => {
      notFound(await h().query(OP, { activityId: "00000000-0000-4000-8000-000000000000" }), /no activity/);
      const other = await h().newOrg("mfa 404");
      const mine = completed(
        await h().submit("create_user_tag", TAG, { userTagName: "x404", userIds: [] }, { as: other }),
        "createUserTagResult",
      );
      assert.ok(mine);
      const list = (await h().query("list_activities", {}, { as: other })).json.activities as Json[];
      notFound(await h().query(OP, { activityId: list[0]!.id }), /no activity/);
      assert.deepEqual((await h().query(OP, { activityId: list[0]!.id }, { as: other })).json.mfaStatuses, []);
    });
  },
  undefined,
  { logins },
);
