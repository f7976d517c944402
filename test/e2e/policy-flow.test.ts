// End-to-end: the policy engine and consensus, through the official SDK clients only.
//   @turnkey/http (TurnkeyClient + ApiKeyStamper): raw responses, no polling — used for every
//     step that may answer ACTIVITY_STATUS_CONSENSUS_NEEDED, and for votes;
//   @turnkey/sdk-server (Turnkey(...).apiClient()): where a completed result is expected (it
//     flattens `result[resultKey]`, and would poll ~4 s on a non-terminal status).
// One real server per engine, behind a recording proxy so that HTTP statuses can be asserted.
// Each test works in its own sub-organization, except the last one, which changes the root
// quorum of the organization `sigil init` created (and restores it).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { engines, type InitResult, type RunningServer } from "../helpers/server.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import {
  RecordingProxy,
  expectError,
  partyFor,
  postSigned,
  startHarness,
  type AnyRec,
  type Harness,
  type ExpectedError,
  type Party,
  type PostResult,
} from "../helpers/policy-harness.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const S = {
  COMPLETED: "ACTIVITY_STATUS_COMPLETED",
  FAILED: "ACTIVITY_STATUS_FAILED",
  CONSENSUS: "ACTIVITY_STATUS_CONSENSUS_NEEDED",
  REJECTED: "ACTIVITY_STATUS_REJECTED",
} as const;
const O = {
  ALLOW: "OUTCOME_ALLOW",
  DENY_EXPLICIT: "OUTCOME_DENY_EXPLICIT",
  DENY_IMPLICIT: "OUTCOME_DENY_IMPLICIT",
  REQUIRES_CONSENSUS: "OUTCOME_REQUIRES_CONSENSUS",
  REJECTED: "OUTCOME_REJECTED",
  ERROR: "OUTCOME_ERROR",
  TIME_INACTIVE: "OUTCOME_TIME_INACTIVE",
} as const;
const APPROVED = "VOTE_SELECTION_APPROVED";
const REJECTED_VOTE = "VOTE_SELECTION_REJECTED";
const PERMISSION_ERROR = "type.googleapis.com/errors.v1.PolicyEnginePermissionError";
const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";
const NOT_AUTHORIZED = "request not authorized: ";

const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;

// Strictly increasing timestamps: two requests of a test never share a body by accident
// (an identical body is, by design, the same activity or a retried vote).
let lastTs = 0;
function nextTimestampMs(): string {
  lastTs = Math.max(Date.now(), lastTs + 1);
  return String(lastTs);
}

/** A submit body as @turnkey/http takes it. */
function envelope<const T extends string, P>(type: T, organizationId: string, parameters: P) {
  return { type, timestampMs: nextTimestampMs(), organizationId, parameters };
}

interface PolicyInput {
  policyName: string;
  effect: "EFFECT_ALLOW" | "EFFECT_DENY";
  condition?: string;
  consensus?: string;
  notes: string;
  time?: string;
}

interface Org {
  orgId: string;
  root: Party;
}

interface ConsensusOrg extends Org {
  tagId: string;
  policyId: string;
  /** Tagged with `tagId`. */
  a: Party;
  b: Party;
  c: Party;
  /** Untagged, not root: not included in the consensus. */
  d: Party;
}

/** `{seconds, nanos}`, both decimal strings. */
function assertTimestamp(ts: unknown, what: string): void {
  const t = ts as AnyRec;
  assert.match(String(t?.seconds), /^\d+$/, `${what}.seconds: ${JSON.stringify(ts)}`);
  assert.match(String(t?.nanos), /^\d+$/, `${what}.nanos: ${JSON.stringify(ts)}`);
  assert.equal(typeof t.seconds, "string");
  assert.equal(typeof t.nanos, "string");
}

/**
 * One evaluation record: its ids, each policy's outcome in the organization's policy order,
 * then exactly one final entry without policyId.
 */
function assertRecord(
  record: AnyRec,
  exp: { activityId: string; organizationId: string; voteId: string; policies: [string, string][]; final: string },
): void {
  assert.match(record.id, UUID);
  assert.equal(record.activityId, exp.activityId);
  assert.equal(record.organizationId, exp.organizationId);
  assert.equal(record.voteId, exp.voteId, "the record names the vote it evaluated");
  assertTimestamp(record.createdAt, "evaluation.createdAt");
  const entries = record.policyEvaluations as AnyRec[];
  assert.deepEqual(
    entries,
    [...exp.policies.map(([policyId, outcome]) => ({ policyId, outcome })), { outcome: exp.final }],
    `evaluation record ${JSON.stringify(record)}`,
  );
  assert.ok(!("policyId" in entries.at(-1)!), "the final entry has no policyId");
}

function assertVote(
  vote: AnyRec,
  exp: { userId: string; selection: string; activityId: string; message?: string; publicKey?: string },
): void {
  assert.match(vote.id, UUID);
  assert.equal(vote.userId, exp.userId);
  assert.equal(vote.user?.userId, exp.userId);
  assert.equal(vote.selection, exp.selection);
  assert.equal(vote.activityId, exp.activityId);
  if (exp.message !== undefined) assert.equal(vote.message, exp.message);
  if (exp.publicKey !== undefined) assert.equal(vote.publicKey, exp.publicKey);
  assert.equal(vote.scheme, "SIGNATURE_SCHEME_TK_API_P256");
}

for (const engine of engines()) {
  describe(`policy flow (${engine.name})`, { skip: engine.skip, timeout: 300_000 }, () => {
    let server: RunningServer | undefined;
    let proxy: RecordingProxy | undefined;
    let init: InitResult;
    /** R1: the root user `sigil init` created, in the root organization. */
    let root: Party;

    const fail = (p: Promise<unknown>, exp: ExpectedError) => expectError(proxy!, p, exp);
    const party = (key: ReturnType<typeof generateP256KeyPair>, userId: string, orgId: string) => partyFor(proxy!.url, key, userId, orgId);

    /** A sub-organization of the root organization, with one root user (threshold 1). */
    async function newOrg(label: string): Promise<Org> {
      const key = generateP256KeyPair();
      const res = await root.sdk.createSubOrganization({
        subOrganizationName: uniq(label),
        rootUsers: [
          {
            userName: `${label}-root`,
            apiKeys: [{ apiKeyName: `${label}-root-key`, publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        rootQuorumThreshold: 1,
      });
      assert.equal(res.activity.status, S.COMPLETED);
      const rootUserId = res.rootUserIds?.[0];
      assert.ok(rootUserId, `no root user in ${JSON.stringify(res)}`);
      return { orgId: res.subOrganizationId, root: party(key, rootUserId, res.subOrganizationId) };
    }

    /** A non-root user with a long-lived API key, created by `by` (a root user of `orgId`). */
    async function addUser(by: Party, userName: string, userTags: string[] = []): Promise<Party> {
      const key = generateP256KeyPair();
      const res = await by.sdk.createUsers({
        users: [
          {
            userName,
            apiKeys: [{ apiKeyName: `${userName}-key`, publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
            userTags,
          },
        ],
      });
      assert.equal(res.activity.status, S.COMPLETED);
      assert.equal(res.userIds.length, 1);
      return party(key, res.userIds[0]!, by.orgId);
    }

    /** Creates a policy through sdk-server (the caller must be allowed outright). */
    async function createPolicy(by: Party, p: PolicyInput): Promise<string> {
      const res = await by.sdk.createPolicy(p);
      assert.equal(res.activity.status, S.COMPLETED, JSON.stringify(res.activity));
      assert.match(res.policyId, UUID);
      return res.policyId;
    }

    async function createTag(by: Party, userTagName: string): Promise<string> {
      const res = await by.sdk.createUserTag({ userTagName, userIds: [] });
      assert.equal(res.activity.status, S.COMPLETED);
      assert.match(res.userTagId, UUID);
      return res.userTagId;
    }

    async function evaluations(viewer: Party, activityId: string): Promise<AnyRec[]> {
      const res = await viewer.http.getPolicyEvaluations({ organizationId: viewer.orgId, activityId });
      assert.ok(Array.isArray(res.policyEvaluations));
      return res.policyEvaluations as AnyRec[];
    }

    async function getActivity(viewer: Party, activityId: string): Promise<AnyRec> {
      return (await viewer.http.getActivity({ organizationId: viewer.orgId, activityId })).activity as AnyRec;
    }

    async function tagsNamed(viewer: Party, name: string): Promise<AnyRec[]> {
      const { userTags } = await viewer.http.listUserTags({ organizationId: viewer.orgId });
      return (userTags as AnyRec[]).filter((t) => t.tagName === name);
    }

    const tagBody = (orgId: string, userTagName: string) =>
      envelope("ACTIVITY_TYPE_CREATE_USER_TAG", orgId, { userTagName, userIds: [] as string[] });

    const approve = (voter: Party, fingerprint: string) =>
      voter.http.approveActivity(envelope("ACTIVITY_TYPE_APPROVE_ACTIVITY", voter.orgId, { fingerprint }));
    const reject = (voter: Party, fingerprint: string) =>
      voter.http.rejectActivity(envelope("ACTIVITY_TYPE_REJECT_ACTIVITY", voter.orgId, { fingerprint }));

    /** Submits through @turnkey/http and checks the 200 CONSENSUS_NEEDED answer. */
    async function expectPending(p: Promise<{ activity: unknown }>, submitter: Party): Promise<AnyRec> {
      const { activity } = await p;
      const a = activity as AnyRec;
      assert.equal(proxy!.last().status, 200);
      assert.equal(a.status, S.CONSENSUS, JSON.stringify(a));
      assert.deepEqual(a.result, {});
      assert.equal(a.failure, undefined);
      assert.equal(a.votes.length, 1);
      assertVote(a.votes[0], { userId: submitter.userId, selection: APPROVED, activityId: a.id, publicKey: submitter.key.publicKey });
      // The submitter has voted already: it can neither approve nor reject again.
      assert.equal(a.canApprove, false);
      assert.equal(a.canReject, false);
      return a;
    }

    /** Three tagged users, one untagged user, and a 2-of-tagged ALLOW policy on CREATE_USER_TAG. */
    async function consensusOrg(label: string): Promise<ConsensusOrg> {
      const org = await newOrg(label);
      const tagId = await createTag(org.root, "approvers");
      const [a, b, c, d] = [
        await addUser(org.root, "alice", [tagId]),
        await addUser(org.root, "bob", [tagId]),
        await addUser(org.root, "carol", [tagId]),
        await addUser(org.root, "dave"),
      ];
      const policyId = await createPolicy(org.root, {
        policyName: "two tagged approvers for user tags",
        effect: "EFFECT_ALLOW",
        consensus: `approvers.filter(u, u.tags.contains('${tagId}')).count() >= 2`,
        condition: "activity.kind == 'CREATE_USER_TAG'",
        notes: "",
      });
      return { ...org, tagId, policyId, a: a!, b: b!, c: c!, d: d! };
    }

    let harness: Harness | undefined;
    before(async () => {
      harness = await startHarness(engine.name, "Policy Flow Org");
      ({ init, server, proxy, root } = harness);
    });

    after(async () => harness?.stop());

    it("1. a non-root user is implicitly denied: 403/7 with the activity id, FAILED in the list, evaluation explains it", async () => {
      const org = await newOrg("implicit");
      const nora = await addUser(org.root, "nora");
      // Neither policy applies to CREATE_USER_TAG: one is about policies, the other errors
      // (CREATE_USER_TAG exposes no params) — and an erroring DENY does not deny.
      const unrelated = await createPolicy(org.root, {
        policyName: "policy admin",
        effect: "EFFECT_ALLOW",
        condition: "activity.resource == 'POLICY'",
        consensus: `approvers.any(u, u.id == '${nora.userId}')`,
        notes: "",
      });
      const erroring = await createPolicy(org.root, {
        policyName: "no bulk user deletes",
        effect: "EFFECT_DENY",
        condition: "activity.params.user_ids.count() > 1",
        notes: "errors on every type without user_ids",
      });
      // Would allow Nora, but its time window is over.
      const expired = await createPolicy(org.root, {
        policyName: "expired grant",
        effect: "EFFECT_ALLOW",
        condition: "activity.kind == 'CREATE_USER_TAG'",
        notes: "",
        time: "time.now < Timestamp('2020-01-01T00:00:00Z')",
      });

      const tagName = uniq("denied");
      const body = tagBody(org.orgId, tagName);
      const denied = await fail(nora.http.createUserTag(body), {
        status: 403,
        code: 7,
        startsWith: NOT_AUTHORIZED,
        path: "/public/v1/submit/create_user_tag",
      });
      const perm = denied.detail(PERMISSION_ERROR);
      assert.ok(perm, `no PolicyEnginePermissionError in ${JSON.stringify(denied.details)}`);
      assert.match(perm.activityId, UUID);
      assert.equal(typeof perm.message, "string");
      assert.deepEqual(perm.policyEvaluations, [
        { policyId: unrelated, outcome: O.DENY_IMPLICIT },
        { policyId: erroring, outcome: O.ERROR },
        { policyId: expired, outcome: O.TIME_INACTIVE },
      ]);
      const activityId = perm.activityId as string;

      // Listed FAILED (the denied user may read its own organization), not elsewhere.
      for (const viewer of [nora, org.root]) {
        const failed = await viewer.http.getActivities({ organizationId: org.orgId, filterByStatus: [S.FAILED] });
        const listed = failed.activities.find((x) => x.id === activityId) as AnyRec | undefined;
        assert.ok(listed, `activity ${activityId} not in getActivities(FAILED) for ${viewer.userId}`);
        assert.equal(listed.status, S.FAILED);
        assert.equal(listed.type, "ACTIVITY_TYPE_CREATE_USER_TAG");
        assert.equal(listed.failure?.code, 7);
        assert.equal(listed.canApprove, false);
        assert.equal(listed.canReject, false);
        const completed = await viewer.http.getActivities({ organizationId: org.orgId, filterByStatus: [S.COMPLETED] });
        assert.ok(!completed.activities.some((x) => x.id === activityId));
      }
      const activity = await getActivity(org.root, activityId);
      assert.deepEqual(activity.result, {});
      assert.equal(activity.votes.length, 1);
      assertVote(activity.votes[0], { userId: nora.userId, selection: APPROVED, activityId, message: JSON.stringify(body) });
      assert.deepEqual(await tagsNamed(org.root, tagName), [], "a denied activity creates nothing");

      const records = await evaluations(nora, activityId);
      assert.equal(records.length, 1);
      assertRecord(records[0]!, {
        activityId,
        organizationId: org.orgId,
        voteId: activity.votes[0].id,
        policies: [
          [unrelated, O.DENY_IMPLICIT],
          [erroring, O.ERROR],
          [expired, O.TIME_INACTIVE],
        ],
        final: O.DENY_IMPLICIT,
      });

      // The same activity by the organization's root user: root quorum (1 of 1) allows it.
      const byRoot = await org.root.sdk.createUserTag({ userTagName: tagName, userIds: [] });
      assert.equal(byRoot.activity.status, S.COMPLETED);
      const [rootRecord] = await evaluations(org.root, byRoot.activity.id);
      assertRecord(rootRecord!, {
        activityId: byRoot.activity.id,
        organizationId: org.orgId,
        voteId: (byRoot.activity.votes[0] as AnyRec).id,
        policies: [
          [unrelated, O.DENY_IMPLICIT],
          [erroring, O.ERROR],
          [expired, O.TIME_INACTIVE],
        ],
        final: O.ALLOW,
      });
    });

    it("2. an ALLOW policy naming the user lets it act; an unrelated policy stays DENY_IMPLICIT", async () => {
      const org = await newOrg("allow");
      const uma = await addUser(org.root, "uma");
      const vic = await addUser(org.root, "vic");
      const allow = await createPolicy(org.root, {
        policyName: "uma creates users",
        effect: "EFFECT_ALLOW",
        consensus: `approvers.any(user, user.id == '${uma.userId}')`,
        condition: "activity.resource == 'USER' && activity.action == 'CREATE'",
        notes: "",
      });
      const unrelated = await createPolicy(org.root, {
        policyName: "vic deletes policies",
        effect: "EFFECT_ALLOW",
        consensus: `approvers.any(user, user.id == '${vic.userId}')`,
        condition: "activity.resource == 'POLICY' && activity.action == 'DELETE'",
        notes: "",
      });
      // Consensus over the credentials that approved: Vic's API key may create users.
      const byKey = await createPolicy(org.root, {
        policyName: "vic's key creates users",
        effect: "EFFECT_ALLOW",
        consensus:
          "credentials.any(c, c.type == 'CREDENTIAL_TYPE_API_KEY_P256'" +
          ` && c.public_key == '${vic.key.publicKey}' && c.user_id == '${vic.userId}')`,
        condition: "activity.kind == 'CREATE_USERS'",
        notes: "",
      });

      const tagName = uniq("allowed");
      const res = await uma.sdk.createUserTag({ userTagName: tagName, userIds: [] });
      assert.equal(res.activity.status, S.COMPLETED);
      assert.match(res.userTagId, UUID);
      assert.deepEqual(res.activity.result, { createUserTagResult: { userTagId: res.userTagId, userIds: [] } });
      assert.deepEqual(
        (await tagsNamed(org.root, tagName)).map((t) => t.tagId),
        [res.userTagId],
      );
      const records = await evaluations(uma, res.activity.id);
      assert.equal(records.length, 1);
      assertRecord(records[0]!, {
        activityId: res.activity.id,
        organizationId: org.orgId,
        voteId: (res.activity.votes[0] as AnyRec).id,
        policies: [
          [allow, O.ALLOW],
          [unrelated, O.DENY_IMPLICIT],
          [byKey, O.DENY_IMPLICIT],
        ],
        final: O.ALLOW,
      });

      // Another kind of the same resource/action is allowed by the same policy.
      const users = await uma.sdk.createUsers({
        users: [{ userName: "by-uma", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      assert.equal(users.activity.status, S.COMPLETED);
      assert.equal(users.userIds.length, 1);

      // Vic matches the condition but not the consensus: the activity waits for Uma.
      const vicBody = tagBody(org.orgId, uniq("by-vic"));
      const pending = await expectPending(vic.http.createUserTag(vicBody), vic);
      assert.equal((await getActivity(uma, pending.id)).canApprove, true, "uma is named in the consensus");
      const [pendingRecord] = await evaluations(vic, pending.id);
      assertRecord(pendingRecord!, {
        activityId: pending.id,
        organizationId: org.orgId,
        voteId: pending.votes[0].id,
        policies: [
          [allow, O.REQUIRES_CONSENSUS],
          [unrelated, O.DENY_IMPLICIT],
          [byKey, O.DENY_IMPLICIT],
        ],
        final: O.REQUIRES_CONSENSUS,
      });
      const approved = (await approve(uma, pending.fingerprint)).activity as AnyRec;
      assert.equal(approved.id, pending.id);
      assert.equal(approved.status, S.COMPLETED);
      assert.equal((await tagsNamed(org.root, vicBody.parameters.userTagName)).length, 1);

      // Vic alone may create users: the credentials policy allows it (the USER/CREATE one still waits for Uma).
      const byVic = await vic.sdk.createUsers({
        users: [{ userName: "by-vic", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      assert.equal(byVic.activity.status, S.COMPLETED);
      const [byVicRecord] = await evaluations(vic, byVic.activity.id);
      assertRecord(byVicRecord!, {
        activityId: byVic.activity.id,
        organizationId: org.orgId,
        voteId: (byVic.activity.votes[0] as AnyRec).id,
        policies: [
          [allow, O.REQUIRES_CONSENSUS],
          [unrelated, O.DENY_IMPLICIT],
          [byKey, O.ALLOW],
        ],
        final: O.ALLOW,
      });
    });

    it("3. an explicit DENY wins over a matching ALLOW; the root quorum still bypasses it", async () => {
      const org = await newOrg("deny");
      const uma = await addUser(org.root, "uma");
      const allow = await createPolicy(org.root, {
        policyName: "uma creates users",
        effect: "EFFECT_ALLOW",
        consensus: `approvers.any(user, user.id == '${uma.userId}')`,
        condition: "activity.resource == 'USER' && activity.action == 'CREATE'",
        notes: "",
      });
      const deny = await createPolicy(org.root, {
        policyName: "nobody creates user tags",
        effect: "EFFECT_DENY",
        condition: "activity.kind == 'CREATE_USER_TAG'",
        notes: "no consensus: applies whoever approved",
      });

      const tagName = uniq("blocked");
      const denied = await fail(uma.http.createUserTag(tagBody(org.orgId, tagName)), { status: 403, code: 7, startsWith: NOT_AUTHORIZED });
      assert.ok(denied.message.includes(deny), `the message names the deny policy: ${denied.message}`);
      const perm = denied.detail(PERMISSION_ERROR);
      assert.ok(perm);
      assert.deepEqual(perm.policyEvaluations, [
        { policyId: allow, outcome: O.ALLOW },
        { policyId: deny, outcome: O.DENY_EXPLICIT },
      ]);
      const activity = await getActivity(uma, perm.activityId);
      assert.equal(activity.status, S.FAILED);
      assert.equal(activity.failure?.code, 7);
      const records = await evaluations(uma, activity.id);
      assert.equal(records.length, 1);
      assertRecord(records[0]!, {
        activityId: activity.id,
        organizationId: org.orgId,
        voteId: activity.votes[0].id,
        policies: [
          [allow, O.ALLOW],
          [deny, O.DENY_EXPLICIT],
        ],
        final: O.DENY_EXPLICIT,
      });
      assert.deepEqual(await tagsNamed(org.root, tagName), []);

      // Outside the deny's condition the allow still works.
      const users = await uma.sdk.createUsers({
        users: [{ userName: "still-allowed", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      assert.equal(users.activity.status, S.COMPLETED);
      const [usersRecord] = await evaluations(uma, users.activity.id);
      assertRecord(usersRecord!, {
        activityId: users.activity.id,
        organizationId: org.orgId,
        voteId: (users.activity.votes[0] as AnyRec).id,
        policies: [
          [allow, O.ALLOW],
          [deny, O.DENY_IMPLICIT],
        ],
        final: O.ALLOW,
      });

      // A met root quorum bypasses policies; the record still shows what each decided.
      const byRoot = await org.root.sdk.createUserTag({ userTagName: tagName, userIds: [] });
      assert.equal(byRoot.activity.status, S.COMPLETED);
      const [rootRecord] = await evaluations(org.root, byRoot.activity.id);
      assertRecord(rootRecord!, {
        activityId: byRoot.activity.id,
        organizationId: org.orgId,
        voteId: (byRoot.activity.votes[0] as AnyRec).id,
        policies: [
          [allow, O.REQUIRES_CONSENSUS],
          [deny, O.DENY_EXPLICIT],
        ],
        final: O.ALLOW,
      });

      // Policy changes apply to the next evaluation: narrowed, the deny no longer matches...
      await org.root.sdk.updatePolicy({ policyId: deny, policyCondition: "activity.kind == 'DELETE_USER_TAGS'" });
      const narrowed = await uma.sdk.createUserTag({ userTagName: uniq("after-update"), userIds: [] });
      assert.equal(narrowed.activity.status, S.COMPLETED);
      // ...with its condition cleared, it applies to everything and blocks the allowed kind again...
      await org.root.sdk.updatePolicy({ policyId: deny, policyCondition: "" });
      await fail(
        uma.sdk.createUsers({ users: [{ userName: "blocked", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] }),
        {
          status: 403,
          code: 7,
        },
      );
      // ...and deleting the allow leaves Uma with nothing: implicit deny once the deny is gone too.
      await org.root.sdk.deletePolicies({ policyIds: [deny, allow] });
      const none = await fail(uma.http.createUserTag(tagBody(org.orgId, uniq("no-policies"))), { status: 403, code: 7 });
      assert.deepEqual(none.detail(PERMISSION_ERROR)?.policyEvaluations, []);
      const [noneRecord] = await evaluations(uma, none.detail(PERMISSION_ERROR)?.activityId);
      assert.deepEqual(noneRecord!.policyEvaluations, [{ outcome: O.DENY_IMPLICIT }]);
      await fail(uma.http.getPolicyEvaluations({ organizationId: org.orgId, activityId: randomUUID() }), { status: 404, code: 5 });
    });

    it("4. consensus 2 of 3 tagged users: approve completes, reject closes, votes are checked", async () => {
      const org = await consensusOrg("two-of-three");
      const { a, b, c, d, policyId } = org;
      const evaluation = (activityId: string, voteId: string, perPolicy: string, final: string) => ({
        activityId,
        organizationId: org.orgId,
        voteId,
        policies: [[policyId, perPolicy]] as [string, string][],
        final,
      });

      // Round 1: A submits, B approves.
      const name1 = uniq("first");
      const first = await expectPending(a.http.createUserTag(tagBody(org.orgId, name1)), a);
      const seenBy = async (viewer: Party) => {
        const x = await getActivity(viewer, first.id);
        return [x.canApprove, x.canReject];
      };
      assert.deepEqual(await seenBy(a), [false, false], "the initiator has voted");
      assert.deepEqual(await seenBy(b), [true, true], "B is included in the consensus");
      assert.deepEqual(await seenBy(d), [false, false], "D is not tagged");
      assert.deepEqual(await seenBy(org.root), [true, true], "root users may vote on anything");
      assert.deepEqual(await seenBy({ ...root, orgId: org.orgId }), [false, false], "the parent's root reads it but does not vote here");
      let records = await evaluations(a, first.id);
      assert.equal(records.length, 1);
      assertRecord(records[0]!, evaluation(first.id, first.votes[0].id, O.REQUIRES_CONSENSUS, O.REQUIRES_CONSENSUS));

      // A user of another organization (here: the parent's root) is not a voter of this one:
      // a parent's credential does not write to its sub-organization, votes included (docs/policy-language.md §6.7).
      await fail(approve({ ...root, orgId: org.orgId }, first.fingerprint), {
        status: 403,
        code: 7,
        startsWith: NOT_AUTHORIZED,
        includes: "parent",
      });
      await fail(approve(b, "0".repeat(64)), { status: 404, code: 5, includes: "No activity found with fingerprint" });
      // An ineligible voter is refused; nothing changes.
      await fail(approve(d, first.fingerprint), {
        status: 403,
        code: 7,
        startsWith: NOT_AUTHORIZED,
        path: "/public/v1/submit/approve_activity",
      });
      await fail(reject(d, first.fingerprint), { status: 403, code: 7, startsWith: NOT_AUTHORIZED });
      // The initiator's submission was its vote: a second one is refused.
      await fail(approve(a, first.fingerprint), { status: 400, code: 3, includes: "already voted" });
      const unchanged = await getActivity(a, first.id);
      assert.equal(unchanged.status, S.CONSENSUS);
      assert.equal(unchanged.votes.length, 1);
      assert.equal((await evaluations(a, first.id)).length, 1);
      assert.deepEqual(await tagsNamed(org.root, name1), []);

      // B approves through sdk-server (approve_activity is not polled): the target completes.
      const viaSdk = (await b.sdk.approveActivity({ fingerprint: first.fingerprint })) as AnyRec;
      assert.equal(proxy!.last().status, 200);
      const done = viaSdk.activity as AnyRec;
      assert.equal(done.id, first.id, "approve_activity answers with the target activity");
      assert.equal(done.type, "ACTIVITY_TYPE_CREATE_USER_TAG");
      assert.equal(done.status, S.COMPLETED);
      const userTagId = done.result?.createUserTagResult?.userTagId as string;
      assert.match(userTagId, UUID);
      assert.deepEqual(done.result, { createUserTagResult: { userTagId, userIds: [] } });
      assert.deepEqual(viaSdk.createUserTagResult, done.result.createUserTagResult, "sdk-server spreads the target's result");
      assert.equal(done.votes.length, 2);
      assertVote(done.votes[0], { userId: a.userId, selection: APPROVED, activityId: first.id });
      assertVote(done.votes[1], { userId: b.userId, selection: APPROVED, activityId: first.id, publicKey: b.key.publicKey });
      assert.equal(done.canApprove, false);
      assert.deepEqual(
        (await tagsNamed(org.root, name1)).map((t) => t.tagId),
        [userTagId],
      );
      records = await evaluations(b, first.id);
      assert.equal(records.length, 2, "one record per vote");
      assertRecord(records[0]!, evaluation(first.id, done.votes[0].id, O.REQUIRES_CONSENSUS, O.REQUIRES_CONSENSUS));
      assertRecord(records[1]!, evaluation(first.id, done.votes[1].id, O.ALLOW, O.ALLOW));
      // B voting twice is refused.
      await fail(approve(b, first.fingerprint), { status: 400, code: 3, includes: "already voted" });
      assert.equal((await getActivity(b, first.id)).votes.length, 2);

      // Round 2: A submits again; the list shows who may vote; C rejects.
      const name2 = uniq("second");
      const second = await expectPending(a.http.createUserTag(tagBody(org.orgId, name2)), a);
      const pendingFor = async (viewer: Party) => {
        const { activities } = await viewer.http.getActivities({ organizationId: org.orgId, filterByStatus: [S.CONSENSUS] });
        assert.deepEqual(
          activities.map((x) => x.id),
          [second.id],
        );
        const x = activities[0] as AnyRec;
        return [x.canApprove, x.canReject];
      };
      assert.deepEqual(await pendingFor(b), [true, true]);
      assert.deepEqual(await pendingFor(c), [true, true]);
      assert.deepEqual(await pendingFor(a), [false, false]);
      assert.deepEqual(await pendingFor(d), [false, false]);

      const rejected = (await reject(c, second.fingerprint)).activity as AnyRec;
      assert.equal(proxy!.last().status, 200);
      assert.equal(rejected.id, second.id);
      assert.equal(rejected.status, S.REJECTED);
      assert.deepEqual(rejected.result, {});
      assert.equal(rejected.votes.length, 2);
      assertVote(rejected.votes[1], { userId: c.userId, selection: REJECTED_VOTE, activityId: second.id });
      assert.deepEqual(await tagsNamed(org.root, name2), []);
      // Terminal: later votes are refused (FAILED_PRECONDITION → 400, code 9); a repeated
      // rejection is a second vote by the same user.
      await fail(approve(b, second.fingerprint), { status: 400, code: 9, path: "/public/v1/submit/approve_activity" });
      await fail(reject(b, second.fingerprint), { status: 400, code: 9 });
      await fail(reject(c, second.fingerprint), { status: 400, code: 3, includes: "already voted" });
      const closed = await getActivity(org.root, second.id);
      assert.equal(closed.status, S.REJECTED);
      assert.equal(closed.votes.length, 2);
      const { activities: rejectedList } = await org.root.http.getActivities({ organizationId: org.orgId, filterByStatus: [S.REJECTED] });
      assert.deepEqual(
        rejectedList.map((x) => x.id),
        [second.id],
      );
      records = await evaluations(c, second.id);
      assert.equal(records.length, 2);
      assertRecord(records[0]!, evaluation(second.id, closed.votes[0].id, O.REQUIRES_CONSENSUS, O.REQUIRES_CONSENSUS));
      assert.equal(records[1]!.voteId, closed.votes[1].id);
      assert.deepEqual(records[1]!.policyEvaluations.at(-1), { outcome: O.REJECTED });
    });

    it("5. an identical resubmission of a pending activity by another eligible user is an approval", async () => {
      const org = await consensusOrg("resubmit");
      const { a, b, d, policyId } = org;
      const tagName = uniq("resubmitted");
      const body = tagBody(org.orgId, tagName);
      const pending = await expectPending(a.http.createUserTag(body), a);

      // The same bytes by the same user: the same activity, no new vote.
      const again = (await a.http.createUserTag(body)).activity as AnyRec;
      assert.equal(again.id, pending.id);
      assert.equal(again.status, S.CONSENSUS);
      assert.equal(again.votes.length, 1);

      // The same bytes signed by an ineligible user: refused, nothing changes.
      const byD = await d.http.stampCreateUserTag(body);
      assert.equal(byD.body, pending.votes[0].message);
      const refused = await postSigned(byD);
      assert.equal(refused.status, 403, JSON.stringify(refused.json));
      assert.equal(refused.json.code, 7);
      assert.equal((await getActivity(a, pending.id)).votes.length, 1);

      // The same bytes signed by B: B's approval, the activity completes.
      const signed = await b.http.stampCreateUserTag(body);
      assert.equal(signed.body, pending.votes[0].message, "B signs exactly the bytes A submitted");
      assert.equal(signed.url, `${proxy!.url}/public/v1/submit/create_user_tag`);
      const res = await postSigned(signed);
      assert.equal(res.status, 200, JSON.stringify(res.json));
      const done = res.json.activity as AnyRec;
      assert.equal(done.id, pending.id);
      assert.equal(done.fingerprint, pending.fingerprint);
      assert.equal(done.status, S.COMPLETED);
      const userTagId = done.result?.createUserTagResult?.userTagId as string;
      assert.match(userTagId, UUID);
      assert.equal(done.votes.length, 2);
      assertVote(done.votes[1], {
        userId: b.userId,
        selection: APPROVED,
        activityId: pending.id,
        message: signed.body,
        publicKey: b.key.publicKey,
      });
      assert.deepEqual(
        (await tagsNamed(org.root, tagName)).map((t) => t.tagId),
        [userTagId],
      );
      const records = await evaluations(b, pending.id);
      assert.equal(records.length, 2);
      assertRecord(records[1]!, {
        activityId: pending.id,
        organizationId: org.orgId,
        voteId: done.votes[1].id,
        policies: [[policyId, O.ALLOW]],
        final: O.ALLOW,
      });

      // Once more by B: the completed activity, no further vote, no second tag.
      const replay = await postSigned(await b.http.stampCreateUserTag(body));
      assert.equal(replay.status, 200);
      assert.equal(replay.json.activity.id, pending.id);
      assert.equal(replay.json.activity.status, S.COMPLETED);
      assert.equal(replay.json.activity.votes.length, 2);
      assert.equal((await tagsNamed(org.root, tagName)).length, 1);
    });

    it("6. a vote answers with the target as re-evaluated: FAILED when a DENY triggers or execution fails", async () => {
      const org = await consensusOrg("vote-fails");
      const { a, b, c, d, policyId } = org;
      const deny = await createPolicy(org.root, {
        policyName: "not with dave",
        effect: "EFFECT_DENY",
        consensus: `approvers.any(u, u.id == '${d.userId}')`,
        condition: "activity.kind == 'CREATE_USER_TAG'",
        notes: "",
      });
      const tagName = uniq("vetoed");
      const pending = await expectPending(a.http.createUserTag(tagBody(org.orgId, tagName)), a);
      assert.equal((await getActivity(d, pending.id)).canApprove, true, "named in the DENY policy's consensus");
      const vetoed = (await approve(d, pending.fingerprint)).activity as AnyRec;
      assert.equal(proxy!.last().status, 200);
      assert.equal(vetoed.id, pending.id);
      assert.equal(vetoed.status, S.FAILED);
      assert.equal(vetoed.failure?.code, 7);
      assert.deepEqual(vetoed.result, {});
      assert.deepEqual(await tagsNamed(org.root, tagName), []);
      const records = await evaluations(a, pending.id);
      assert.equal(records.length, 2);
      assertRecord(records[0]!, {
        activityId: pending.id,
        organizationId: org.orgId,
        voteId: vetoed.votes[0].id,
        policies: [
          [policyId, O.REQUIRES_CONSENSUS],
          [deny, O.DENY_IMPLICIT],
        ],
        final: O.REQUIRES_CONSENSUS,
      });
      assertRecord(records[1]!, {
        activityId: pending.id,
        organizationId: org.orgId,
        voteId: vetoed.votes[1].id,
        policies: [
          [policyId, O.REQUIRES_CONSENSUS],
          [deny, O.DENY_EXPLICIT],
        ],
        final: O.DENY_EXPLICIT,
      });
      await fail(approve(b, pending.fingerprint), { status: 400, code: 9 });

      // Approved, but no longer executable: the name was taken meanwhile.
      const dupName = uniq("taken");
      const second = await expectPending(a.http.createUserTag(tagBody(org.orgId, dupName)), a);
      const rootTag = await createTag(org.root, dupName);
      const failed = (await approve(c, second.fingerprint)).activity as AnyRec;
      assert.equal(proxy!.last().status, 200);
      assert.equal(failed.id, second.id);
      assert.equal(failed.status, S.FAILED, JSON.stringify(failed));
      assert.equal(failed.failure?.code, 6);
      assert.equal(failed.votes.length, 2, "the approvals stand");
      assert.deepEqual(
        (await tagsNamed(org.root, dupName)).map((t) => t.tagId),
        [rootTag],
      );
      const [, approvedRecord] = await evaluations(c, second.id);
      assert.deepEqual(approvedRecord!.policyEvaluations.at(-1), { outcome: O.ALLOW });
    });

    it("7. policy API: create (with time), create_policies, get/list verbatim, update, delete, validation", async () => {
      const org = await newOrg("policy-api");
      const R = org.root;
      const listNames = async () => (await R.http.getPolicies({ organizationId: org.orgId })).policies.map((p) => p.policyName);

      // create_policy: expressions round-trip byte for byte (whitespace, newlines).
      const condition = "activity.resource == 'USER'\n    &&   activity.action   == 'CREATE'";
      const consensus = "approvers.count() >= 2 ";
      const p1 = await R.sdk.createPolicy({ policyName: "p1", effect: "EFFECT_ALLOW", condition, consensus, notes: "first" });
      const a1 = p1.activity as AnyRec;
      assert.equal(a1.type, "ACTIVITY_TYPE_CREATE_POLICY_V3");
      assert.deepEqual(a1.intent, {
        createPolicyIntentV3: { policyName: "p1", effect: "EFFECT_ALLOW", condition, consensus, notes: "first" },
      });
      assert.deepEqual(a1.result, { createPolicyResult: { policyId: p1.policyId } });
      const got1 = (await R.http.getPolicy({ organizationId: org.orgId, policyId: p1.policyId })).policy as AnyRec;
      assert.deepEqual(
        { ...got1, createdAt: undefined, updatedAt: undefined },
        {
          policyId: p1.policyId,
          policyName: "p1",
          effect: "EFFECT_ALLOW",
          condition,
          consensus,
          notes: "first",
          createdAt: undefined,
          updatedAt: undefined,
        },
      );
      assertTimestamp(got1.createdAt, "policy.createdAt");
      assertTimestamp(got1.updatedAt, "policy.updatedAt");

      const time = "time.now >= Timestamp('2025-01-01T00:00:00Z')";
      const p2 = await R.sdk.createPolicy({
        policyName: "p2",
        effect: "EFFECT_DENY",
        condition: "activity.action == 'DELETE'",
        notes: "",
        time,
      });
      const got2 = (await R.sdk.getPolicy({ policyId: p2.policyId })).policy as AnyRec;
      assert.equal(got2.time, time);
      assert.equal(got2.effect, "EFFECT_DENY");
      assert.equal(got2.consensus, "");

      // create_policies: ids in input order.
      const batch = await R.http.createPolicies(
        envelope("ACTIVITY_TYPE_CREATE_POLICIES", org.orgId, {
          policies: ["b0", "b1", "b2"].map((policyName, i) => ({
            policyName,
            effect: "EFFECT_ALLOW" as const,
            condition: `activity.kind == 'KIND_${i}'`,
            notes: `note ${i}`,
          })),
        }),
      );
      const batchAct = batch.activity as AnyRec;
      assert.equal(batchAct.status, S.COMPLETED);
      const ids = batchAct.result.createPoliciesResult.policyIds as string[];
      assert.equal(ids.length, 3);
      assert.equal(new Set(ids).size, 3);
      for (const [i, id] of ids.entries()) {
        const { policy } = await R.http.getPolicy({ organizationId: org.orgId, policyId: id });
        assert.equal(policy.policyName, `b${i}`);
        assert.equal(policy.condition, `activity.kind == 'KIND_${i}'`);
        assert.equal(policy.notes, `note ${i}`);
      }

      // list_policies: every policy, oldest first, exactly as get_policy shows it. (The
      // policies of one create_policies share their createdAt: their relative order is open.)
      const { policies } = await R.http.getPolicies({ organizationId: org.orgId });
      assert.deepEqual(
        policies.slice(0, 2).map((p) => p.policyId),
        [p1.policyId, p2.policyId],
      );
      assert.deepEqual(
        policies
          .slice(2)
          .map((p) => p.policyId)
          .sort(),
        [...ids].sort(),
      );
      assert.deepEqual(policies[0], got1);
      assert.deepEqual(policies[1], got2);
      const before = await listNames();

      // create_policies is all or nothing: an invalid expression (checked at submission)...
      const invalidBatch = await fail(
        R.http.createPolicies(
          envelope("ACTIVITY_TYPE_CREATE_POLICIES", org.orgId, {
            policies: [
              { policyName: "batch-ok", effect: "EFFECT_ALLOW" as const, condition: "true", notes: "" },
              { policyName: "batch-bad", effect: "EFFECT_ALLOW" as const, condition: "activity.kind == 1", notes: "" },
            ],
          }),
        ),
        { status: 400, code: 3, startsWith: "invalid policy condition: condition:1:18: " },
      );
      assert.deepEqual(
        invalidBatch.detail(BAD_REQUEST)?.fieldViolations?.map((f: AnyRec) => f.field),
        ["parameters.policies[1].condition"],
      );
      // ...or a name already taken (found while writing).
      await fail(
        R.http.createPolicies(
          envelope("ACTIVITY_TYPE_CREATE_POLICIES", org.orgId, {
            policies: [
              { policyName: "batch-new", effect: "EFFECT_ALLOW" as const, notes: "" },
              { policyName: "p1", effect: "EFFECT_ALLOW" as const, notes: "" },
            ],
          }),
        ),
        { status: 400, code: 3, includes: "policy label must be unique" },
      );
      assert.deepEqual(await listNames(), before, "a failed create_policies stores nothing");

      // Duplicate name.
      await fail(R.sdk.createPolicy({ policyName: "p1", effect: "EFFECT_DENY", notes: "again" }), {
        status: 400,
        code: 3,
        includes: "policy label must be unique",
      });

      // Invalid expressions: 400 with `invalid policy <field>: <field>:<line>:<column>: <problem>`.
      await fail(R.sdk.createPolicy({ policyName: "bad-type", effect: "EFFECT_ALLOW", condition: "activity.type == 1", notes: "" }), {
        status: 400,
        code: 3,
        message: "invalid policy condition: condition:1:18: expected string, found int",
      });
      const invalid: { field: "condition" | "consensus" | "time"; expr: string; line: number }[] = [
        { field: "consensus", expr: 'approvers.any(user, user.id == "abc")', line: 1 },
        { field: "consensus", expr: "approvers.count()", line: 1 },
        { field: "consensus", expr: "approvers.count() >= '2'", line: 1 },
        { field: "consensus", expr: "activity.kind == 'CREATE_POLICY'", line: 1 },
        { field: "condition", expr: "activity.resource == 'POLICY' and activity.action == 'CREATE'", line: 1 },
        { field: "condition", expr: "(activity.action == 'CREATE'", line: 1 },
        { field: "condition", expr: "approvers.any(u, u.id == 'x')", line: 1 },
        { field: "condition", expr: "activity.kind == 'CREATE_POLICY'\n  && activity.action == 5", line: 2 },
        { field: "time", expr: "CronSpan('*/15 * * * *', '1h', 'UTC')", line: 1 },
        { field: "time", expr: "time.now < Timestamp('2025-01-01T00:00:00')", line: 1 },
      ];
      for (const { field, expr, line } of invalid) {
        const err = await fail(R.sdk.createPolicy({ policyName: uniq("invalid"), effect: "EFFECT_ALLOW", notes: "", [field]: expr }), {
          status: 400,
          code: 3,
          startsWith: `invalid policy ${field}: ${field}:${line}:`,
        });
        assert.match(err.message, new RegExp(`^invalid policy ${field}: ${field}:${line}:\\d+: \\S`), `${field} ${JSON.stringify(expr)}`);
        assert.deepEqual(
          err.detail(BAD_REQUEST)?.fieldViolations?.map((f: AnyRec) => f.field),
          [`parameters.${field}`],
        );
      }
      // A condition keyword (wallet) outside condition is refused.
      await fail(
        R.sdk.createPolicy({ policyName: "wallets", effect: "EFFECT_ALLOW", condition: "true", consensus: "wallet.id == 'x'", notes: "" }),
        {
          status: 400,
          code: 3,
          includes: "is a condition keyword",
        },
      );
      assert.deepEqual(await listNames(), before, "no invalid policy was stored");

      // update_policy: an absent field keeps its value.
      const upd = await R.sdk.updatePolicy({ policyId: p1.policyId, policyNotes: "renoted" });
      assert.equal(upd.activity.status, S.COMPLETED);
      assert.equal(upd.policyId, p1.policyId);
      assert.equal((upd.activity as AnyRec).type, "ACTIVITY_TYPE_UPDATE_POLICY_V2");
      const afterNotes = (await R.http.getPolicy({ organizationId: org.orgId, policyId: p1.policyId })).policy as AnyRec;
      assert.deepEqual({ ...afterNotes, notes: "first", updatedAt: undefined }, { ...got1, updatedAt: undefined });
      assert.equal(afterNotes.notes, "renoted");
      assert.deepEqual(afterNotes.createdAt, got1.createdAt);
      assert.ok(
        BigInt(afterNotes.updatedAt.seconds) * 1_000_000_000n + BigInt(afterNotes.updatedAt.nanos) >=
          BigInt(got1.updatedAt.seconds) * 1_000_000_000n + BigInt(got1.updatedAt.nanos),
      );
      // An empty expression clears it; the others stay.
      await R.sdk.updatePolicy({ policyId: p1.policyId, policyCondition: "" });
      const cleared = (await R.http.getPolicy({ organizationId: org.orgId, policyId: p1.policyId })).policy;
      assert.equal(cleared.condition, "");
      assert.equal(cleared.consensus, consensus);
      assert.equal(cleared.policyName, "p1");
      // Several fields at once.
      await R.sdk.updatePolicy({ policyId: p2.policyId, policyName: "p2-renamed", policyEffect: "EFFECT_ALLOW", time: "" });
      const p2After = (await R.http.getPolicy({ organizationId: org.orgId, policyId: p2.policyId })).policy as AnyRec;
      assert.equal(p2After.policyName, "p2-renamed");
      assert.equal(p2After.effect, "EFFECT_ALLOW");
      assert.ok(p2After.time === undefined || p2After.time === "", `time not cleared: ${JSON.stringify(p2After.time)}`);
      assert.equal(p2After.condition, "activity.action == 'DELETE'");
      // Invalid expression, unknown policy, taken name: refused, nothing changed.
      const badUpdate = await fail(R.sdk.updatePolicy({ policyId: p1.policyId, policyCondition: "activity.kind ==" }), {
        status: 400,
        code: 3,
        startsWith: "invalid policy condition: condition:1:",
      });
      assert.deepEqual(
        badUpdate.detail(BAD_REQUEST)?.fieldViolations?.map((f: AnyRec) => f.field),
        ["parameters.policyCondition"],
      );
      await fail(R.sdk.updatePolicy({ policyId: randomUUID(), policyNotes: "x" }), { status: 404, code: 5 });
      await fail(R.sdk.updatePolicy({ policyId: p1.policyId, policyName: "b0" }), {
        status: 400,
        code: 3,
        includes: "policy label must be unique",
      });
      const p1Now = (await R.http.getPolicy({ organizationId: org.orgId, policyId: p1.policyId })).policy;
      assert.deepEqual([p1Now.policyName, p1Now.condition, p1Now.notes], ["p1", "", "renoted"]);

      // delete_policy.
      const del = await R.sdk.deletePolicy({ policyId: p2.policyId });
      assert.equal(del.activity.status, S.COMPLETED);
      assert.equal(del.policyId, p2.policyId);
      await fail(R.http.getPolicy({ organizationId: org.orgId, policyId: p2.policyId }), { status: 404, code: 5 });
      // delete_policies: one unknown id fails the whole activity.
      const unknown = randomUUID();
      await fail(R.sdk.deletePolicies({ policyIds: [ids[0]!, unknown] }), { status: 404, code: 5, includes: unknown });
      assert.equal((await R.http.getPolicy({ organizationId: org.orgId, policyId: ids[0]! })).policy.policyId, ids[0]);
      const delMany = await R.sdk.deletePolicies({ policyIds: [ids[0]!, ids[1]!] });
      assert.equal(delMany.activity.status, S.COMPLETED);
      assert.deepEqual(delMany.policyIds, [ids[0], ids[1]]);
      assert.deepEqual(
        (await R.http.getPolicies({ organizationId: org.orgId })).policies.map((p) => p.policyId),
        [p1.policyId, ids[2]],
      );
      await fail(R.sdk.deletePolicies({ policyIds: [] }), { status: 400, code: 3 });
    });

    it("8. at most 100 policies per organization: the 101st is refused with 429/8", async () => {
      const org = await newOrg("policy-cap");
      const R = org.root;
      const hundred = await R.sdk.createPolicies({
        policies: Array.from({ length: 100 }, (_, i) => ({
          policyName: `cap-${i}`,
          effect: "EFFECT_ALLOW" as const,
          condition: `activity.kind == 'NOTHING_${i}'`,
          notes: "",
        })),
      });
      assert.equal(hundred.activity.status, S.COMPLETED);
      assert.equal(hundred.policyIds.length, 100);
      await fail(R.sdk.createPolicy({ policyName: "cap-100", effect: "EFFECT_ALLOW", notes: "" }), {
        status: 429,
        code: 8,
        path: "/public/v1/submit/create_policy",
      });
      await fail(R.sdk.createPolicies({ policies: [{ policyName: "cap-101", effect: "EFFECT_ALLOW", notes: "" }] }), {
        status: 429,
        code: 8,
      });
      const { policies } = await R.http.getPolicies({ organizationId: org.orgId });
      assert.equal(policies.length, 100);
      assert.ok(!policies.some((p) => p.policyName === "cap-100" || p.policyName === "cap-101"));
      // Deleting one makes room for one.
      await R.sdk.deletePolicy({ policyId: hundred.policyIds[0]! });
      const again = await R.sdk.createPolicy({ policyName: "cap-100", effect: "EFFECT_ALLOW", notes: "" });
      assert.equal(again.activity.status, S.COMPLETED);
    });

    it("9. concurrent approvals: the target executes exactly once, no 500", async () => {
      const org = await newOrg("concurrent");
      const tagId = await createTag(org.root, "approvers");
      const submitter = await addUser(org.root, "submitter");
      const approvers: Party[] = [];
      for (let i = 0; i < 5; i++) approvers.push(await addUser(org.root, `approver-${i}`, [tagId]));
      const policyId = await createPolicy(org.root, {
        policyName: "two of five",
        effect: "EFFECT_ALLOW",
        consensus: `approvers.filter(u, u.tags.contains('${tagId}')).count() >= 2`,
        condition: "activity.kind == 'CREATE_USER_TAG'",
        notes: "",
      });

      for (let round = 0; round < 3; round++) {
        const tagName = uniq(`race-${round}`);
        // The untagged submitter's own approval does not count: two tagged approvals are needed.
        const pending = await expectPending(submitter.http.createUserTag(tagBody(org.orgId, tagName)), submitter);
        const signed = await Promise.all(
          approvers
            .slice(0, 4)
            .map((p) =>
              p.http.stampApproveActivity(envelope("ACTIVITY_TYPE_APPROVE_ACTIVITY", org.orgId, { fingerprint: pending.fingerprint })),
            ),
        );
        const answers: PostResult[] = await Promise.all(signed.map(postSigned));
        const summary = JSON.stringify(answers.map((r) => [r.status, r.json.code ?? r.json.activity?.status, r.json.message]));
        for (const r of answers) {
          assert.ok(r.status === 200 || (r.status === 400 && r.json.code === 9), `round ${round}: ${summary}`);
        }
        const ok = answers.filter((r) => r.status === 200).map((r) => r.json.activity as AnyRec);
        assert.ok(ok.every((x) => x.id === pending.id));
        assert.deepEqual(ok.map((x) => x.status).sort(), [S.COMPLETED, S.CONSENSUS].sort(), `round ${round}: ${summary}`);

        const final = await getActivity(org.root, pending.id);
        assert.equal(final.status, S.COMPLETED);
        assert.equal(final.votes.length, 3, "the submitter and the two accepted approvals");
        const tags = await tagsNamed(org.root, tagName);
        assert.equal(tags.length, 1, `the tag exists exactly once: ${JSON.stringify(tags)}`);
        assert.equal(tags[0]!.tagId, final.result.createUserTagResult.userTagId);

        const records = await evaluations(org.root, pending.id);
        assert.equal(records.length, 3, "one record per accepted vote");
        assert.deepEqual(
          records.map((r) => r.voteId).sort(),
          final.votes.map((v: AnyRec) => v.id).sort(),
          "every record names one of the activity's votes",
        );
        const finals = records.map((r) => (r.policyEvaluations as AnyRec[]).at(-1)!.outcome);
        assert.deepEqual([...finals].sort(), [O.ALLOW, O.REQUIRES_CONSENSUS, O.REQUIRES_CONSENSUS].sort());
        for (const r of records) assert.equal((r.policyEvaluations as AnyRec[])[0]!.policyId, policyId);
      }
      const internal = proxy!.exchanges.filter((e) => e.status >= 500);
      assert.deepEqual(internal, [], "no request of this suite was answered with a 5xx");
      assert.ok(!server!.output().includes('"msg":"internal error"'), "the server logged an internal error");
    });

    it("10. root quorum 2 of 3 (sub-organization): a policy lets one root act alone where it applies", async () => {
      const keys = [generateP256KeyPair(), generateP256KeyPair(), generateP256KeyPair()];
      const res = await root.sdk.createSubOrganization({
        subOrganizationName: uniq("two-of-three-roots"),
        rootUsers: keys.map((k, i) => ({
          userName: `root-${i}`,
          apiKeys: [{ apiKeyName: `root-${i}-key`, publicKey: k.publicKey, curveType: "API_KEY_CURVE_P256" as const }],
          authenticators: [],
          oauthProviders: [],
        })),
        rootQuorumThreshold: 2,
      });
      assert.equal(res.activity.status, S.COMPLETED);
      const orgId = res.subOrganizationId;
      const [r1, r2, r3] = await Promise.all(
        keys.map(async (k) => {
          const p = party(k, "", orgId);
          const me = await p.http.getWhoami({ organizationId: orgId });
          return party(k, me.userId, orgId);
        }),
      );
      assert.deepEqual([r1!.userId, r2!.userId, r3!.userId].sort(), [...res.rootUserIds!].sort());

      const created = await expectPending(
        r1!.http.createPolicy(
          envelope("ACTIVITY_TYPE_CREATE_POLICY_V3", orgId, {
            policyName: "r1 creates users",
            effect: "EFFECT_ALLOW" as const,
            consensus: `approvers.any(u, u.id == '${r1!.userId}')`,
            condition: "activity.kind == 'CREATE_USERS'",
            notes: "",
          }),
        ),
        r1!,
      );
      const done = (await approve(r3!, created.fingerprint)).activity as AnyRec;
      assert.equal(done.status, S.COMPLETED);
      const policyId = done.result.createPolicyResult.policyId as string;

      // Where the policy applies, R1 alone is enough...
      const users = await r1!.sdk.createUsers({
        users: [{ userName: "solo", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      assert.equal(users.activity.status, S.COMPLETED);
      const [usersRecord] = await evaluations(r1!, users.activity.id);
      assertRecord(usersRecord!, {
        activityId: users.activity.id,
        organizationId: orgId,
        voteId: (users.activity.votes[0] as AnyRec).id,
        policies: [[policyId, O.ALLOW]],
        final: O.ALLOW,
      });
      // ...elsewhere the root quorum is pending, and one rejection by another root closes it.
      const other = await expectPending(r1!.http.createUserTag(tagBody(orgId, uniq("needs-two"))), r1!);
      const [otherRecord] = await evaluations(r1!, other.id);
      assertRecord(otherRecord!, {
        activityId: other.id,
        organizationId: orgId,
        voteId: other.votes[0].id,
        policies: [[policyId, O.DENY_IMPLICIT]],
        final: O.REQUIRES_CONSENSUS,
      });
      const rejected = (await reject(r2!, other.fingerprint)).activity as AnyRec;
      assert.equal(rejected.status, S.REJECTED);
    });

    // Regressions once found here: the cap raced on PostgreSQL (count-then-insert without the
    // organization's row lock), and records tied on the millisecond or were stamped before
    // their vote waited for the target's row lock.
    it("concurrent create_policy calls do not exceed the 100-policy cap", async () => {
      const org = await newOrg("cap-race");
      const R = org.root;
      const filler = await R.sdk.createPolicies({
        policies: Array.from({ length: 98 }, (_, i) => ({ policyName: `fill-${i}`, effect: "EFFECT_ALLOW" as const, notes: "" })),
      });
      assert.equal(filler.policyIds.length, 98);
      const signed = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          R.http.stampCreatePolicy(
            envelope("ACTIVITY_TYPE_CREATE_POLICY_V3", org.orgId, { policyName: `race-${i}`, effect: "EFFECT_ALLOW" as const, notes: "" }),
          ),
        ),
      );
      const answers = await Promise.all(signed.map(postSigned));
      const statuses = answers.map((r) => `${r.status}/${r.json.code ?? r.json.activity?.status}`).sort();
      const { policies } = await R.http.getPolicies({ organizationId: org.orgId });
      assert.equal(policies.length, 100, `6 concurrent create_policy at 98 policies answered ${statuses.join(", ")}`);
      assert.deepEqual(statuses, ["200/ACTIVITY_STATUS_COMPLETED", "200/ACTIVITY_STATUS_COMPLETED", "429/8", "429/8", "429/8", "429/8"]);
    });

    it("evaluation records of concurrent approvals are listed in the order the passes ran", async () => {
      const org = await newOrg("record-order");
      const tagId = await createTag(org.root, "approvers");
      const submitter = await addUser(org.root, "submitter");
      const voters: Party[] = [];
      for (let i = 0; i < 6; i++) voters.push(await addUser(org.root, `voter-${i}`, [tagId]));
      await createPolicy(org.root, {
        policyName: "four tagged approvals",
        effect: "EFFECT_ALLOW",
        consensus: `approvers.filter(u, u.tags.contains('${tagId}')).count() >= 4`,
        condition: "activity.kind == 'CREATE_USER_TAG'",
        notes: "",
      });
      for (let round = 0; round < 12; round++) {
        const pending = await expectPending(submitter.http.createUserTag(tagBody(org.orgId, uniq(`order-${round}`))), submitter);
        const signed = await Promise.all(
          voters.map((p) =>
            p.http.stampApproveActivity(envelope("ACTIVITY_TYPE_APPROVE_ACTIVITY", org.orgId, { fingerprint: pending.fingerprint })),
          ),
        );
        const answers = await Promise.all(signed.map(postSigned));
        const accepted = answers.map((r, i) => ({ r, voter: voters[i]! })).filter((x) => x.r.status === 200);
        assert.equal(accepted.length, 4);
        // The pass that completed the activity answered COMPLETED; it ran after the three others.
        const completers = accepted.filter((x) => x.r.json.activity.status === S.COMPLETED);
        assert.equal(completers.length, 1);
        const final = await getActivity(org.root, pending.id);
        assert.equal(final.status, S.COMPLETED);
        const completingVote = (final.votes as AnyRec[]).find((v) => v.userId === completers[0]!.voter.userId)!.id as string;
        const records = await evaluations(org.root, pending.id);
        const listed = records.map(
          (r) => `${r.voteId === completingVote ? "completing vote" : "other vote"}: ${(r.policyEvaluations as AnyRec[]).at(-1)!.outcome}`,
        );
        assert.equal(records[0]!.voteId, pending.votes[0].id);
        assert.deepEqual(
          listed,
          [...Array<string>(4).fill(`other vote: ${O.REQUIRES_CONSENSUS}`), `completing vote: ${O.ALLOW}`],
          `round ${round}: get_policy_evaluations does not list the passes in the order they ran ` +
            `(records ${JSON.stringify(records.map((r) => [r.voteId, r.createdAt]))})`,
        );
      }
    });

    // Last: it changes the root quorum of the root organization (and restores it).
    it("11. root quorum 2/2: root activities need both roots; root pending overrides a DENY; update_root_quorum is root-only", async () => {
      const r1 = root;
      const orgId = init.organizationId;
      const r2 = await addUser(r1, "second-root");
      const nina = await addUser(r1, "nina");
      // R1 carries a tag (docs/policy-language.md §8, example 6, with R1 tagged).
      const deletersTag = (await r1.sdk.createUserTag({ userTagName: uniq("deleters"), userIds: [r1.userId] })).userTagId;
      const elsewhere = await newOrg("quorum-elsewhere");

      // Validation of update_root_quorum.
      const tooHigh = await fail(
        r1.http.updateRootQuorum(envelope("ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", orgId, { threshold: 3, userIds: [r1.userId, r2.userId] })),
        { status: 400, code: 3, path: "/public/v1/submit/update_root_quorum" },
      );
      assert.deepEqual(
        tooHigh.detail(BAD_REQUEST)?.fieldViolations?.map((f: AnyRec) => f.field),
        ["parameters.threshold"],
      );
      const stranger = randomUUID();
      await fail(
        r1.http.updateRootQuorum(envelope("ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", orgId, { threshold: 1, userIds: [r1.userId, stranger] })),
        { status: 404, code: 5, includes: stranger },
      );
      // A user of another organization (here a sub-organization's root) is not a user of this one.
      await fail(
        r1.http.updateRootQuorum(envelope("ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", orgId, { threshold: 1, userIds: [elsewhere.root.userId] })),
        { status: 404, code: 5, includes: elsewhere.root.userId },
      );
      await fail(
        r1.http.updateRootQuorum(envelope("ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", orgId, { threshold: 1, userIds: [r1.userId, r1.userId] })),
        { status: 400, code: 3 },
      );

      // R1 alone (threshold 1) makes the quorum {R1, R2}, threshold 2.
      const urq = await r1.sdk.updateRootQuorum({ threshold: 2, userIds: [r1.userId, r2.userId] });
      assert.equal(urq.activity.status, S.COMPLETED);
      assert.equal((urq.activity as AnyRec).type, "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM");
      const [urqRecord] = await evaluations(r1, urq.activity.id);
      assertRecord(urqRecord!, {
        activityId: urq.activity.id,
        organizationId: orgId,
        voteId: (urq.activity.votes[0] as AnyRec).id,
        policies: [],
        final: O.ALLOW,
      });

      /** R1 submits, the activity waits for R2; R2 approves and it completes. */
      async function bothRoots<R extends { activity: unknown }>(
        submit: () => Promise<R>,
        checkPending?: (pending: AnyRec) => Promise<void>,
      ): Promise<AnyRec> {
        const pending = await expectPending(submit(), r1);
        assert.equal((await getActivity(r2, pending.id)).canApprove, true);
        await checkPending?.(pending);
        const done = (await approve(r2, pending.fingerprint)).activity as AnyRec;
        assert.equal(done.id, pending.id);
        assert.equal(done.status, S.COMPLETED, JSON.stringify(done));
        assert.equal(done.votes.length, 2);
        assertVote(done.votes[1], { userId: r2.userId, selection: APPROVED, activityId: pending.id });
        return done;
      }

      // Any activity by R1 now waits for R2: a DENY on every delete approved by a tagged user.
      const created = await bothRoots(
        () =>
          r1.http.createPolicy(
            envelope("ACTIVITY_TYPE_CREATE_POLICY_V3", orgId, {
              policyName: "no deletes by deleters",
              effect: "EFFECT_DENY" as const,
              consensus: `approvers.any(user, user.tags.contains('${deletersTag}'))`,
              condition: "activity.action == 'DELETE'",
              notes: "",
            }),
          ),
        async (pending) => {
          // Not a root member and not named by any policy: may not vote.
          assert.equal((await getActivity(nina, pending.id)).canApprove, false);
          await fail(approve(nina, pending.fingerprint), { status: 403, code: 7 });
        },
      );
      const denyId = created.result.createPolicyResult.policyId as string;
      assert.match(denyId, UUID);
      let records = await evaluations(r1, created.id);
      assert.equal(records.length, 2);
      assertRecord(records[0]!, {
        activityId: created.id,
        organizationId: orgId,
        voteId: created.votes[0].id,
        policies: [],
        final: O.REQUIRES_CONSENSUS,
      });
      assertRecord(records[1]!, {
        activityId: created.id,
        organizationId: orgId,
        voteId: created.votes[1].id,
        policies: [],
        final: O.ALLOW,
      });

      // A delete by R1 is explicitly denied, but the root quorum is pending: it waits, and R2 completes it.
      const deleted = await bothRoots(() => r1.http.deletePolicy(envelope("ACTIVITY_TYPE_DELETE_POLICY", orgId, { policyId: denyId })));
      assert.deepEqual(deleted.result, { deletePolicyResult: { policyId: denyId } });
      records = await evaluations(r2, deleted.id);
      assert.equal(records.length, 2);
      assertRecord(records[0]!, {
        activityId: deleted.id,
        organizationId: orgId,
        voteId: deleted.votes[0].id,
        policies: [[denyId, O.DENY_EXPLICIT]],
        final: O.REQUIRES_CONSENSUS,
      });
      assertRecord(records[1]!, {
        activityId: deleted.id,
        organizationId: orgId,
        voteId: deleted.votes[1].id,
        policies: [[denyId, O.DENY_EXPLICIT]],
        final: O.ALLOW,
      });
      await fail(r1.http.getPolicy({ organizationId: orgId, policyId: denyId }), { status: 404, code: 5 });

      // An ALLOW policy naming UPDATE_ROOT_QUORUM and Nina does not let Nina change the quorum.
      const allowed = await bothRoots(() =>
        r1.http.createPolicy(
          envelope("ACTIVITY_TYPE_CREATE_POLICY_V3", orgId, {
            policyName: "nina manages the quorum",
            effect: "EFFECT_ALLOW" as const,
            condition: "activity.type == 'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM'",
            consensus: `approvers.any(u, u.id == '${nina.userId}')`,
            notes: "root-quorum-only types ignore policies",
          }),
        ),
      );
      const allowId = allowed.result.createPolicyResult.policyId as string;
      const ninaDenied = await fail(
        nina.http.updateRootQuorum(envelope("ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", orgId, { threshold: 1, userIds: [nina.userId] })),
        { status: 403, code: 7, startsWith: NOT_AUTHORIZED, path: "/public/v1/submit/update_root_quorum" },
      );
      const ninaActivityId = ninaDenied.detail(PERMISSION_ERROR)?.activityId as string;
      assert.match(ninaActivityId, UUID);
      const ninaActivity = await getActivity(r1, ninaActivityId);
      assert.equal(ninaActivity.status, S.FAILED);
      assert.equal(ninaActivity.type, "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM");
      const { activities: failedList } = await r1.http.getActivities({ organizationId: orgId, filterByStatus: [S.FAILED] });
      assert.ok(failedList.some((x) => x.id === ninaActivityId));
      const [ninaRecord] = await evaluations(r1, ninaActivityId);
      assert.deepEqual(ninaRecord!.policyEvaluations.at(-1), { outcome: O.DENY_IMPLICIT });

      // Restore the quorum {R1}, threshold 1: root-only too, so it needs both roots; Nina,
      // though named by a policy on exactly this type, may not vote on it.
      const restored = await bothRoots(
        () => r1.http.updateRootQuorum(envelope("ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", orgId, { threshold: 1, userIds: [r1.userId] })),
        async (pending) => {
          assert.equal((await getActivity(nina, pending.id)).canApprove, false);
          await fail(approve(nina, pending.fingerprint), { status: 403, code: 7 });
        },
      );
      assert.equal(restored.type, "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM");

      // R1 alone again; R2 is an ordinary user again.
      const tag = await r1.sdk.createUserTag({ userTagName: uniq("after-restore"), userIds: [] });
      assert.equal(tag.activity.status, S.COMPLETED);
      await fail(r2.http.createUserTag(tagBody(orgId, uniq("ex-root"))), { status: 403, code: 7 });
      const cleanup = await r1.sdk.deletePolicy({ policyId: allowId });
      assert.equal(cleanup.activity.status, S.COMPLETED);
    });
  });
}
