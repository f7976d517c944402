// get_session_profile (docs/sessions-and-network.md §6.1): one profile the organization may use.
import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { createSessionProfile } from "../../src/activities/sessions/create_session_profile.ts";

perEngine("get_session_profile", (h) => {
  it("answers the profile with the SDK's v1SessionProfile fields; optional ones absent when unset", async () => {
    const res = await h().submit("create_session_profile", "ACTIVITY_TYPE_CREATE_SESSION_PROFILE", {
      sessionProfileName: "bare",
      scope: "true",
    });
    const id = completed(res, createSessionProfile).sessionProfileId;
    const { sessionProfile } = (await h().query("get_session_profile", { sessionProfileId: id })).json;
    assert.equal(sessionProfile.sessionProfileId, id);
    assert.equal(sessionProfile.sessionProfileName, "bare");
    assert.equal(sessionProfile.scope, "true");
    assert.equal("expirationSeconds" in sessionProfile, false);
    assert.equal("notes" in sessionProfile, false);
    assert.match(sessionProfile.createdAt.seconds, /^\d+$/);
  });

  it("an unknown id is 404; a malformed one 400", async () => {
    notFound(await h().query("get_session_profile", { sessionProfileId: "00000000-0000-4000-8000-000000000000" }), /no session profile/);
    invalidRequest(await h().query("get_session_profile", { sessionProfileId: "nope" }), undefined, ["sessionProfileId"]);
  });

  it("another root organization's profile is not found", async () => {
    const other = await h().newOrg("Other");
    const id = completed(
      await h().submit(
        "create_session_profile",
        "ACTIVITY_TYPE_CREATE_SESSION_PROFILE",
        { sessionProfileName: "theirs", scope: "true" },
        { as: other },
      ),
      createSessionProfile,
    ).sessionProfileId;
    notFound(await h().query("get_session_profile", { sessionProfileId: id }), /no session profile/);
  });
});
