import { it } from "node:test";
import assert from "node:assert/strict";
import { verifyAppProofSignature } from "@turnkey/crypto";
import { notFound, onSqlite, stampedFrom, invalidRequest } from "../helpers/inproc.ts";

const OP = "list_app_proofs";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("list_app_proofs", (h) => {
  const tag = async (name: string, generateAppProofs: boolean) => {
    const body = {
      type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      timestampMs: String(Date.now()),
      organizationId: h().root.organizationId,
      parameters: { userTagName: name, userIds: [] },
      generateAppProofs,
    };
    const res = await stampedFrom(h(), "127.0.0.1", h().root, "/public/v1/submit/create_user_tag", body);
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.activity;
  };

  it("answers the proofs an activity carries, the same as get_activity, which the SDK verifies", async () => {
    const activity = await tag("proved", true);
    const res = await h().query(OP, { activityId: activity.id });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.appProofs.length, 1);
    assert.deepEqual(res.json.appProofs, activity.appProofs);
    assert.doesNotThrow(() => verifyAppProofSignature(res.json.appProofs[0]));
    // The official client's method for this path.
    const sdk = await h().sdk();
    const viaSdk = await sdk.getAppProofs({ activityId: activity.id });
    assert.deepEqual(viaSdk.appProofs, activity.appProofs);
  });

  it("an activity submitted without generateAppProofs has none: an empty list", async () => {
    const activity = await tag("unproved", false);
    assert.deepEqual((await h().query(OP, { activityId: activity.id })).json.appProofs, []);
  });

  it("an unknown activity, or one of another organization, is 404", async () => {
    notFound(await h().query(OP, { activityId: MISSING }), /no activity/);
    const activity = await tag("elsewhere", true);
    const other = await h().newOrg();
    notFound(await h().query(OP, { activityId: activity.id }, { as: other }), /no activity/);
  });

  it("a malformed activity id is 400", async () => {
    invalidRequest(await h().query(OP, { activityId: "x" }), undefined, ["activityId"]);
  });
});
