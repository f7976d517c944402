import { it } from "node:test";
import assert from "node:assert/strict";
import {
  forbidden,
  invalidRequest,
  notFound,
  onSqlite,
  precondition,
  quorumOrg,
  twoOfTwo,
  type Creds,
  type Harness,
} from "../helpers/inproc.ts";

const OP = "reject_activity";
const TYPE = "ACTIVITY_TYPE_REJECT_ACTIVITY";

async function pending(h: Harness, a: Creds, userTagName: string) {
  const res = await h.submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName, userIds: [] }, { as: a });
  assert.equal(res.json.activity?.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED", JSON.stringify(res.json));
  return res.json.activity as { id: string; fingerprint: string };
}
const tagNames = async (h: Harness, as: Creds) =>
  (await h.query("list_user_tags", {}, { as })).json.userTags.map((t: { tagName: string }) => t.tagName);

onSqlite("reject_activity", (h) => {
  it("one rejection is final: the activity is REJECTED, never executed, and takes no more votes", async () => {
    const { members } = await quorumOrg(h(), 3, 2);
    const [a, b, c] = members as [Creds, Creds, Creds];
    const target = await pending(h(), a, "rejected");
    const res = await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: b });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.activity.id, target.id);
    assert.equal(res.json.activity.status, "ACTIVITY_STATUS_REJECTED");
    assert.ok(
      res.json.activity.votes.some(
        (v: { userId: string; selection: string }) => v.userId === b.userId && v.selection === "VOTE_SELECTION_REJECTED",
      ),
    );
    assert.ok(!(await tagNames(h(), a)).includes("rejected"));
    precondition(
      await h().submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint: target.fingerprint }, { as: c }),
      /awaits consensus/,
    );
  });

  it("the initiator may reject (cancel) its own activity", async () => {
    const { a } = await twoOfTwo(h());
    const target = await pending(h(), a, "cancelled");
    const res = await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: a });
    assert.equal(res.json.activity?.status, "ACTIVITY_STATUS_REJECTED", JSON.stringify(res.json));
  });

  it("a user neither root nor in an applicable consensus may not reject (403); the activity still waits", async () => {
    const { a, other } = await twoOfTwo(h());
    const target = await pending(h(), a, "still-waiting");
    forbidden(await h().submit(OP, TYPE, { fingerprint: target.fingerprint }, { as: other }));
    const now = (await h().query("get_activity", { activityId: target.id }, { as: a })).json.activity;
    assert.equal(now.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");
  });

  it("an unknown fingerprint is 404; a missing one is 400", async () => {
    notFound(await h().submit(OP, TYPE, { fingerprint: "f".repeat(64) }));
    invalidRequest(await h().submit(OP, TYPE, {}), undefined, ["parameters.fingerprint"]);
  });
});
