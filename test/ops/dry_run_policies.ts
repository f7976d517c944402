import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  completed,
  failsWith,
  invalidRequest,
  notFound,
  perEngine,
  type Creds,
  type Harness,
  type Json,
} from "../helpers/inproc.ts";
import { subOrganization } from "../helpers/sub-organizations.ts";
import { literalList, nestedAll } from "../helpers/policy-facts.ts";
import { compiledCacheSize } from "../../src/policy/index.ts";

const OP = "dry_run_policies";
const TAG = "ACTIVITY_TYPE_CREATE_USER_TAG";
const KEY_TAG = "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG";

interface Scene {
  org: Creds;
  member: Creds;
  policyId: string;
  /** member's create_user_tag: allowed today. */
  allowed: string;
  /** member's create_private_key_tag: denied today. */
  denied: string;
  /** member's create_policy: denied today and under the proposal. */
  unchanged: string;
}

/** An organization whose one policy lets a non-root member create user tags, with one activity of each kind. */
async function scene(h: Harness): Promise<Scene> {
  const org = await h.newOrg();
  const [member] = await addUsersWithKeys(h, 1, org);
  const { policyId } = completed(
    await h.submit(
      "create_policy",
      "ACTIVITY_TYPE_CREATE_POLICY_V3",
      {
        policyName: "tags",
        effect: "EFFECT_ALLOW",
        condition: `activity.type == '${TAG}'`,
        consensus: "approvers.count() >= 1",
        notes: "",
      },
      { as: org },
    ),
    "createPolicyResult",
  );
  const allowed = (await h.submit("create_user_tag", TAG, { userTagName: "t1", userIds: [] }, { as: member! })).json.activity.id as string;
  const deniedOf = (res: { status: number; json: Json }) =>
    (failsWith(res, 403, 7, "REQUEST_NOT_AUTHORIZED").details as Json[]).find((d) => d.activityId)!.activityId as string;
  const denied = deniedOf(
    await h.submit("create_private_key_tag", KEY_TAG, { privateKeyTagName: "k1", privateKeyIds: [] }, { as: member! }),
  );
  const unchanged = deniedOf(
    await h.submit(
      "create_policy",
      "ACTIVITY_TYPE_CREATE_POLICY_V3",
      { policyName: "x", effect: "EFFECT_ALLOW", notes: "" },
      { as: member! },
    ),
  );
  return { org, member: member!, policyId, allowed, denied, unchanged };
}

const swap = (policyId: string): Json => ({ update: [{ policyId, condition: `activity.type == '${KEY_TAG}'` }] });

perEngine("dry_run_policies", (h) => {
  let s: Scene;
  it("finds an ALLOW→DENY and a DENY→ALLOW change, with both evaluations; unchanged activities are not listed", async () => {
    s = await scene(h());
    const r = await h().query(OP, { proposal: swap(s.policyId) }, { as: s.org });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.complete, true);
    // The root user's create_users and create_policy, and the member's three.
    assert.equal(r.json.replayed, 5);
    const byId = new Map((r.json.changed as Json[]).map((c) => [c.activityId, c]));
    assert.deepEqual([...byId.keys()].sort(), [s.allowed, s.denied].sort());
    const lost = byId.get(s.allowed)!;
    assert.equal(lost.type, TAG);
    assert.equal(lost.status, "ACTIVITY_STATUS_COMPLETED");
    assert.equal(lost.before.outcome, "OUTCOME_ALLOW");
    assert.equal(lost.before.decidingPolicyId, s.policyId);
    assert.equal(lost.after.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.equal(lost.after.decidingPolicyId, null);
    const p = (lost.after.policies as Json[]).find((x) => x.policyId === s.policyId)!;
    assert.equal(p.policyName, "tags");
    assert.equal(p.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.equal(p.explanation.field, "condition");
    assert.equal(p.explanation.words, `activity.type was ${TAG}, not ${KEY_TAG}`);
    assert.deepEqual(p.explanation.spans, [{ start: 0, end: `activity.type == '${KEY_TAG}'`.length }]);
    const gained = byId.get(s.denied)!;
    assert.equal(gained.before.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.equal(gained.after.outcome, "OUTCOME_ALLOW");
    assert.equal(gained.after.decidingPolicyId, s.policyId);
  });

  it("the official client (TurnkeySDKClientBase.request) sends it, stamped by its API key stamper", async () => {
    const sdk = await h().sdk(s.org);
    const r = await sdk.request<Json, Json>("/public/v1/query/dry_run_policies", {
      organizationId: s.org.organizationId,
      proposal: swap(s.policyId),
    });
    assert.deepEqual((r.changed as Json[]).map((c) => c.activityId).sort(), [s.allowed, s.denied].sort());
    const e = await sdk.request<Json, Json>("/public/v1/query/explain_activity", {
      organizationId: s.org.organizationId,
      activityId: s.denied,
    });
    assert.equal(e.evaluations[0].policies[0].explanation.words, `activity.type was ${KEY_TAG}, not ${TAG}`);
    const c = await sdk.request<Json, Json>("/public/v1/query/check_policy", {
      organizationId: s.org.organizationId,
      condition: "activity.type ==",
    });
    assert.equal(c.valid, false);
  });

  it("an added policy is 'proposed-<n>'; a deletion is replayed too", async () => {
    const r = await h().query(
      OP,
      { proposal: { add: [{ policyName: "deny tags", effect: "EFFECT_DENY", condition: `activity.type == '${TAG}'` }] } },
      { as: s.org },
    );
    const [c] = r.json.changed as Json[];
    assert.equal(r.json.changed.length, 1);
    assert.equal(c!.activityId, s.allowed);
    assert.equal(c!.after.outcome, "OUTCOME_DENY_EXPLICIT");
    assert.equal(c!.after.decidingPolicyId, "proposed-1");
    const gone = await h().query(OP, { proposal: { delete: [s.policyId] } }, { as: s.org });
    assert.deepEqual(
      (gone.json.changed as Json[]).map((x) => [x.activityId, x.after.outcome]),
      [[s.allowed, "OUTCOME_DENY_IMPLICIT"]],
    );
  });

  it("a proposal is a draft: it stays out of the shared compile cache", async () => {
    const before = compiledCacheSize();
    for (let i = 0; i < 5; i++) {
      const draft = `activity.type == '${TAG}' && activity.resource != 'DRAFT_${i}_${Date.now()}'`;
      const r = await h().query(
        OP,
        { proposal: { add: [{ policyName: "draft", effect: "EFFECT_DENY", condition: draft }] } },
        { as: s.org },
      );
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.changed.length, 1);
    }
    assert.equal(compiledCacheSize(), before);
  });

  it("pages by a cursor: a changes limit stops the replay with complete: false, the cursor goes on", async () => {
    const first = await h().query(OP, { proposal: swap(s.policyId), paginationOptions: { limit: "1" } }, { as: s.org });
    assert.equal(first.json.complete, false);
    assert.equal(first.json.changed.length, 1);
    assert.ok(first.json.nextCursor);
    const rest = await h().query(
      OP,
      { proposal: swap(s.policyId), paginationOptions: { limit: "1", after: first.json.nextCursor } },
      { as: s.org },
    );
    assert.equal(rest.json.changed.length, 1);
    assert.notEqual(rest.json.changed[0].activityId, first.json.changed[0].activityId);
    // The window's last N counts across pages.
    const two = await h().query(OP, { proposal: swap(s.policyId), window: { last: 2 } }, { as: s.org });
    assert.equal(two.json.replayed, 2);
    assert.equal(two.json.complete, true);
    // A time window that ends before everything: nothing replayed.
    const none = await h().query(OP, { proposal: swap(s.policyId), window: { beforeMs: "1000" } }, { as: s.org });
    assert.deepEqual([none.json.replayed, none.json.changed.length, none.json.complete], [0, 0, true]);
  });

  it("intent mode: one unsubmitted intent decided as if the caller, or a named user, submitted it alone", async () => {
    const intent = { type: TAG, parameters: { userTagName: "never", userIds: [] } };
    const r = await h().query(OP, { proposal: swap(s.policyId), intent }, { as: s.member });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.intent.before.outcome, "OUTCOME_ALLOW");
    assert.equal(r.json.intent.after.outcome, "OUTCOME_DENY_IMPLICIT");
    assert.match(r.json.intent.after.policies[0].explanation.words, /activity\.type was ACTIVITY_TYPE_CREATE_USER_TAG/);
    // The root user is the root quorum (1 of 1): allowed whatever the policies say.
    const asRoot = await h().query(OP, { proposal: swap(s.policyId), intent: { ...intent, userId: s.org.userId } }, { as: s.member });
    assert.equal(asRoot.json.intent.after.outcome, "OUTCOME_ALLOW");
    // Nothing was submitted.
    const listed = await h().query("list_activities", { filterByType: [TAG], paginationOptions: { limit: "100" } }, { as: s.org });
    assert.equal((listed.json.activities as Json[]).length, 1);
    invalidRequest(await h().query(OP, { proposal: {}, intent: { type: TAG, parameters: { userIds: [] } } }, { as: s.org }), /userTagName/);
    invalidRequest(
      await h().query(OP, { proposal: {}, intent: { type: "ACTIVITY_TYPE_NOPE", parameters: {} } }, { as: s.org }),
      /not an activity type/,
    );
    notFound(await h().query(OP, { proposal: {}, intent: { ...intent, userId: h().root.userId } }, { as: s.org }), /no user/);
  });

  it("a proposed policy that does not compile is a 400 naming the policy and the position", async () => {
    const r = await h().query(
      OP,
      { proposal: { add: [{ policyName: "bad", effect: "EFFECT_ALLOW", condition: "activity.type ==" }] } },
      { as: s.org },
    );
    invalidRequest(r, /proposal\.add\[0\] \("bad"\): invalid policy condition: condition:1:\d+:/, ["proposal.add[0].condition"]);
    invalidRequest(
      await h().query(OP, { proposal: { update: [{ policyId: s.policyId, consensus: "approvers.count() >= 'x'" }] } }, { as: s.org }),
      /proposal\.update\[0\] \("tags"\): invalid policy consensus/,
    );
    // The static cost bound, as create_policy applies it.
    invalidRequest(
      await h().query(
        OP,
        { proposal: { add: [{ policyName: "big", effect: "EFFECT_ALLOW", condition: nestedAll(100, 4) }] } },
        { as: s.org },
      ),
      /the bound is 100000/,
    );
  });

  it("bounds: the window, the proposal's size, unknown policy ids, a malformed cursor (400)", async () => {
    invalidRequest(await h().query(OP, { proposal: {}, window: { last: 100_001 } }, { as: s.org }), /window\.last/);
    const many = Array.from({ length: 101 }, (_, i) => ({ policyName: `p${i}`, effect: "EFFECT_ALLOW", condition: "true" }));
    invalidRequest(await h().query(OP, { proposal: { add: many } }, { as: s.org }), /at most 100/);
    // 1 today + 100 added: past the organization's cap.
    invalidRequest(await h().query(OP, { proposal: { add: many.slice(0, 100) } }, { as: s.org }), /101 policies/);
    invalidRequest(
      await h().query(
        OP,
        { proposal: { add: [{ policyName: "long", effect: "EFFECT_ALLOW", condition: `${literalList(3000)}.contains(1)` }] } },
        { as: s.org },
      ),
      /8192/,
    );
    invalidRequest(await h().query(OP, { proposal: { delete: ["00000000-0000-4000-8000-000000000000"] } }, { as: s.org }), /no policy/);
    invalidRequest(await h().query(OP, { proposal: {}, paginationOptions: { after: "nope" } }, { as: s.org }), /nextCursor/);
    invalidRequest(await h().query(OP, { proposal: {}, paginationOptions: { limit: "0" } }, { as: s.org }), /limit/);
  });

  it("read rules: a sub-organization's user cannot dry-run its parent; the parent may dry-run its sub-organization", async () => {
    const sub = await subOrganization(h(), {}, s.org);
    const refused = await h().query(OP, { proposal: {} }, { as: sub, organizationId: s.org.organizationId });
    // Its credential is not found in the parent or above it: unauthenticated, as for every query (docs/request-path.md §5).
    assert.equal(refused.status, 401, JSON.stringify(refused.json));
    assert.equal(refused.json.code, 16);
    assert.equal(refused.json.changed, undefined);
    assert.equal(
      (await h().query("explain_activity", { activityId: s.allowed }, { as: sub, organizationId: s.org.organizationId })).status,
      401,
    );
    assert.equal((await h().query("check_policy", { condition: "true" }, { as: sub, organizationId: s.org.organizationId })).status, 401);
    const parent = await h().query(OP, { proposal: {} }, { as: s.org, organizationId: sub.organizationId });
    assert.equal(parent.status, 200, JSON.stringify(parent.json));
    assert.equal(parent.json.complete, true);
  });
});
