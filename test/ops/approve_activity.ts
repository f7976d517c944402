import { it } from "node:test";
import assert from "node:assert/strict";
import {
  completed,
  failsWith,
  forbidden,
  invalidRequest,
  notFound,
  onSqlite,
  perEngine,
  precondition,
  quorumOrg,
  twoOfTwo,
  type Creds,
  type Harness,
} from "../helpers/inproc.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";

const OP = "approve_activity";
const TYPE = "ACTIVITY_TYPE_APPROVE_ACTIVITY";
const CONSENSUS = "ACTIVITY_STATUS_CONSENSUS_NEEDED";

/** `a` submits create_user_tag in a 2-of-2 organization: it awaits `b`. */
async function pending(h: Harness, a: Creds, userTagName = `t-${Math.random().toString(36).slice(2)}`) {
  const res = await h.submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName, userIds: [] }, { as: a });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  assert.equal(res.json.activity.status, CONSENSUS);
  return res.json.activity as { id: string; fingerprint: string };
}

onSqlite("approve_activity", (h) => {
  it("the second root approval executes the activity and answers with it (canApprove before, not after)", async () => {
    const { a, b } = await twoOfTwo(h());
    const target = await pending(h(), a, "approved-tag");
    const seen = (await h().query("get_activity", { activityId: target.id }, { as: b })).json.activity;
    assert.equal(seen.canApprove, true);
    const res = await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: b });
    const r = completed(res, createUserTag);
    assert.equal(res.json.activity.id, target.id);
    assert.equal(res.json.activity.votes.length, 2);
    assert.equal(res.json.activity.canApprove, false);
    const tags = (await h().query("list_user_tags", {}, { as: a })).json.userTags;
    assert.deepEqual(
      tags.map((t: { tagId: string }) => t.tagId),
      [r.userTagId],
    );
  });

  it("a vote on an activity no longer awaiting consensus is 400 FAILED_PRECONDITION", async () => {
    const { members, other } = await quorumOrg(h(), 3, 2);
    const target = await pending(h(), members[0]!);
    completed(await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: members[1] }), createUserTag);
    precondition(
      await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: members[2] }),
      /votes are accepted only while it awaits consensus/,
    );
    precondition(await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: other }), /awaits consensus/);
  });

  it("a second, different vote by the same user is 400 INVALID_ARGUMENT", async () => {
    const { a } = await twoOfTwo(h());
    const target = await pending(h(), a);
    failsWith(await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: a }), 400, 3, "REQUEST_INVALID", /already voted/);
  });

  it("an identical retried vote is answered with the activity, not refused", async () => {
    const { a, b } = await twoOfTwo(h());
    const target = await pending(h(), a);
    const timestampMs = String(Date.now());
    const first = await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: b, timestampMs });
    const again = await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: b, timestampMs });
    assert.equal(first.status, 200);
    assert.equal(again.status, 200, JSON.stringify(again.json));
    assert.equal(again.json.activity.id, target.id);
    assert.equal(again.json.activity.votes.length, 2);
  });

  it("a user neither root nor in an applicable consensus may not vote (403)", async () => {
    const { a, other } = await twoOfTwo(h());
    const target = await pending(h(), a);
    forbidden(await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: other }), /cannot vote/);
  });

  it("an unknown fingerprint, or one of another organization, is 404", async () => {
    const { a } = await twoOfTwo(h());
    const target = await pending(h(), a);
    notFound(await h().submit(OP, TYPE, { fingerprint: "0".repeat(64) }, { as: a }), /No activity found/);
    notFound(await h().submit(OP, TYPE, { fingerprint: target.fingerprint }), /No activity found/);
  });

  it("a parent organization's credential may not vote in its sub-organization (403, nothing recorded)", async () => {
    const sub = completed(
      await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: "s",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "r", apiKeys: [], authenticators: [], oauthProviders: [] }],
      }),
      "createSubOrganizationResultV8",
    );
    forbidden(await h().submit(OP, TYPE, { fingerprint: "0".repeat(64) }, { organizationId: sub.subOrganizationId }));
  });

  for (const [what, params] of [
    ["a missing fingerprint", {}],
    ["an empty fingerprint", { fingerprint: "" }],
    ["a 129-character fingerprint", { fingerprint: "a".repeat(129) }],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), undefined, ["parameters.fingerprint"]);
    });
  }
});

perEngine("approve_activity executes once", (h) => {
  it("two concurrent approvals of a 2-of-3 activity: one executes it, the other is told it no longer awaits consensus", async () => {
    const { members } = await quorumOrg(h(), 3, 2);
    const target = await pending(h(), members[0]!, "once");
    const answers = await Promise.all(members.slice(1).map((as) => h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as })));
    const ok = answers.filter((r) => r.status === 200);
    assert.equal(ok.length, 1, JSON.stringify(answers.map((r) => r.json)));
    completed(ok[0]!, createUserTag);
    precondition(answers.find((r) => r.status !== 200)!);
    const tags = (await h().query("list_user_tags", {}, { as: members[0] })).json.userTags.filter(
      (t: { tagName: string }) => t.tagName === "once",
    );
    assert.equal(tags.length, 1);
  });
});
