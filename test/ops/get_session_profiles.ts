// get_session_profiles (docs/sessions-and-network.md §6.1): the organization's own profiles and
// its ancestors', oldest first; never another tenant's.
import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, perEngine, type Json } from "../helpers/inproc.ts";
import { createSessionProfile } from "../../src/activities/sessions/create_session_profile.ts";

perEngine("get_session_profiles", (h) => {
  it("lists the organization's profiles oldest first, and none of another organization", async () => {
    const org = await h().newOrg("Listing");
    const ids: string[] = [];
    for (const name of ["one", "two"]) {
      const res = await h().submit(
        "create_session_profile",
        "ACTIVITY_TYPE_CREATE_SESSION_PROFILE",
        { sessionProfileName: name, scope: "true", notes: name },
        { as: org },
      );
      ids.push(completed(res, createSessionProfile).sessionProfileId);
    }
    const listed = (await h().query("get_session_profiles", {}, { as: org })).json.sessionProfiles as Json[];
    assert.deepEqual(
      listed.map((p) => p.sessionProfileId),
      ids,
    );
    assert.deepEqual(
      listed.map((p) => p.notes),
      ["one", "two"],
    );
    const mine = (await h().query("get_session_profiles")).json.sessionProfiles as Json[];
    assert.ok(!mine.some((p) => ids.includes(p.sessionProfileId)));
  });

  it("an organization without profiles lists none", async () => {
    const org = await h().newOrg("Empty");
    assert.deepEqual((await h().query("get_session_profiles", {}, { as: org })).json, { sessionProfiles: [] });
  });
});
