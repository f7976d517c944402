// create_session_profile and the sessions issued with a profile (docs/sessions-and-network.md §6):
// validation, immutability, who may name a profile, the lifetime ceiling and the scope check.
import { it } from "node:test";
import assert from "node:assert/strict";
import { literalList, nestedAll } from "../helpers/policy-facts.ts";
import {
  addUsersWithKeys,
  twoOfTwo,
  completed,
  exhausted,
  failsWith,
  forbidden,
  invalidRequest,
  notFound,
  onSqlite,
  perEngine,
  UUID,
  type Creds,
  type Harness,
  type Json,
} from "../helpers/inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { newId } from "../../src/store/util.ts";
import { createSessionProfile } from "../../src/activities/sessions/create_session_profile.ts";
import { stampLogin } from "../../src/activities/sessions/stamp_login.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";
import { MAX_SESSION_PROFILES_PER_ORGANIZATION } from "../../src/store/session-profiles.ts";
import { subOrganization } from "../helpers/sub-organizations.ts";

const OP = "create_session_profile";
const TYPE = "ACTIVITY_TYPE_CREATE_SESSION_PROFILE";
const LOGIN = "ACTIVITY_TYPE_STAMP_LOGIN";

async function profile(h: Harness, params: Json, as: Creds = h.root): Promise<string> {
  return completed(await h.submit(OP, TYPE, { sessionProfileName: "p", ...params }, { as }), createSessionProfile).sessionProfileId;
}

function claimsOf(session: string): Json {
  return JSON.parse(atob(session.split(".")[1]!)) as Json;
}

/** A session of `as` issued with the profile; its key as Creds. */
async function session(
  h: Harness,
  sessionProfileId: string,
  as: Creds = h.root,
  extra: Json = {},
): Promise<{ creds: Creds; claims: Json }> {
  const key = generateP256KeyPair();
  const res = await h.submit("stamp_login", LOGIN, { publicKey: key.publicKey, sessionProfileId, ...extra }, { as });
  const claims = claimsOf(completed(res, stampLogin).session);
  return { creds: { organizationId: claims.organization_id, userId: claims.user_id, key }, claims };
}

async function activityCount(h: Harness, as: Creds = h.root): Promise<number> {
  return ((await h.query("list_activities", { paginationOptions: { limit: "100" } }, { as })).json.activities as Json[]).length;
}

onSqlite("create_session_profile", (h) => {
  it("creates a profile, answered by get_session_profile(s) with the SDK's v1SessionProfile fields", async () => {
    const id = await profile(h(), {
      sessionProfileName: "signer",
      scope: "activity.action == 'SIGN'",
      expirationSeconds: "600",
      notes: "signing only",
    });
    assert.match(id, UUID);
    const { sessionProfile } = (await h().query("get_session_profile", { sessionProfileId: id })).json;
    assert.deepEqual(
      { ...sessionProfile, createdAt: undefined, updatedAt: undefined },
      {
        sessionProfileId: id,
        sessionProfileName: "signer",
        scope: "activity.action == 'SIGN'",
        expirationSeconds: "600",
        notes: "signing only",
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.deepEqual(sessionProfile.createdAt, sessionProfile.updatedAt);
    const listed = (await h().query("get_session_profiles")).json.sessionProfiles as Json[];
    assert.ok(listed.some((p) => p.sessionProfileId === id));
  });

  for (const [what, params, field] of [
    ["a blank name", { sessionProfileName: " ", scope: "true" }, "parameters.sessionProfileName"],
    ["a missing scope", { sessionProfileName: "x" }, "parameters.scope"],
    ["a blank scope", { sessionProfileName: "x", scope: "  " }, "parameters.scope"],
    ["a scope that does not parse", { sessionProfileName: "x", scope: "activity.type ==" }, "parameters.scope"],
    ["a scope that does not type-check", { sessionProfileName: "x", scope: "activity.type" }, "parameters.scope"],
    [
      "a scope past the static cost bound (docs/policy-language.md §11.3)",
      { sessionProfileName: "x", scope: nestedAll(100, 3) },
      "parameters.scope",
    ],
    ["expirationSeconds 0", { sessionProfileName: "x", scope: "true", expirationSeconds: "0" }, "parameters.expirationSeconds"],
    [
      "expirationSeconds above the session maximum",
      { sessionProfileName: "x", scope: "true", expirationSeconds: String(365 * 86400 + 1) },
      "parameters.expirationSeconds",
    ],
    ["notes over 4096 characters", { sessionProfileName: "x", scope: "true", notes: "n".repeat(4097) }, "parameters.notes"],
  ] as const) {
    it(`refuses ${what} (400), nothing created`, async () => {
      const before = ((await h().query("get_session_profiles")).json.sessionProfiles as Json[]).length;
      invalidRequest(await h().submit(OP, TYPE, params), undefined, [field]);
      assert.equal(((await h().query("get_session_profiles")).json.sessionProfiles as Json[]).length, before);
    });
  }

  it("a profile is the organization's and its descendants': a sub-organization names its parent's, another tenant's is unknown", async () => {
    const parents = await profile(h(), { scope: "true" });
    const sub = await subOrganization(h());
    // The sub-organization sees it and its users may log in with it.
    assert.equal(
      (await h().query("get_session_profile", { sessionProfileId: parents }, { as: sub })).json.sessionProfile.sessionProfileId,
      parents,
    );
    assert.ok(
      ((await h().query("get_session_profiles", {}, { as: sub })).json.sessionProfiles as Json[]).some(
        (p) => p.sessionProfileId === parents,
      ),
    );
    const { claims } = await session(h(), parents, sub);
    assert.equal(claims.session_profile_id, parents);
    // The sub-organization's own profile is not the parent's to use; another root organization sees neither.
    const subs = await profile(h(), { scope: "true" }, sub);
    notFound(await h().query("get_session_profile", { sessionProfileId: subs }), /no session profile/);
    assert.ok(!((await h().query("get_session_profiles")).json.sessionProfiles as Json[]).some((p) => p.sessionProfileId === subs));
    failsWith(
      await h().submit("stamp_login", LOGIN, { publicKey: generateP256KeyPair().publicKey, sessionProfileId: subs }),
      404,
      5,
      "REQUEST_INVALID",
      /no session profile/,
    );
    const other = await h().newOrg("Other");
    notFound(await h().query("get_session_profile", { sessionProfileId: parents }, { as: other }), /no session profile/);
    failsWith(
      await h().submit("stamp_login", LOGIN, { publicKey: generateP256KeyPair().publicKey, sessionProfileId: parents }, { as: other }),
      404,
      5,
      "REQUEST_INVALID",
      /no session profile/,
    );
    // A parent cannot write a profile into its sub-organization.
    const parentWrite = await h().submit(OP, TYPE, { sessionProfileName: "x", scope: "true" }, { organizationId: sub.organizationId });
    assert.equal(parentWrite.status, 403, JSON.stringify(parentWrite.json));
  });

  it("lifetime: the profile's expirationSeconds is a ceiling, and the session's when the login names none", async () => {
    const id = await profile(h(), { scope: "true", expirationSeconds: "120" });
    const now = Math.floor(Date.now() / 1000);
    const longer = (await session(h(), id, h().root, { expirationSeconds: "3600" })).claims;
    assert.ok(longer.exp <= now + 121 && longer.exp >= now + 110, `exp ${longer.exp - now}s`);
    const shorter = (await session(h(), id, h().root, { expirationSeconds: "60" })).claims;
    assert.ok(shorter.exp <= now + 61 && shorter.exp >= now + 50, `exp ${shorter.exp - now}s`);
    const unnamed = (await session(h(), id)).claims;
    assert.ok(unnamed.exp <= now + 121 && unnamed.exp >= now + 110, `exp ${unnamed.exp - now}s`);
    // The JWT names the profile as upstream does: session_type is its name, scope its condition.
    assert.equal(unnamed.session_type, "p");
    assert.equal(unnamed.scope, "true");
  });

  it("scope: one cut short by its evaluation budget refuses (403 naming it), though in full it would allow (docs/policy-language.md §11.1)", async () => {
    // Within the static bound (20,100 iterations), past one evaluation's budget of steps (8 a step).
    const id = await profile(h(), { scope: `${literalList(100)}.all(a, ${literalList(200)}.all(b, a != 1000 || b == 0))` });
    const { creds } = await session(h(), id);
    const before = await activityCount(h());
    const refused = forbidden(
      await h().submit(
        "create_user_tag",
        "ACTIVITY_TYPE_CREATE_USER_TAG",
        { userTagName: `t-${newId().slice(0, 6)}`, userIds: [] },
        { as: creds },
      ),
      /not allowed by the session's scope .*could not be evaluated: evaluation budget of 100000 steps exceeded/,
    );
    assert.match(refused.message, new RegExp(id));
    assert.equal(await activityCount(h()), before);
  });

  it("scope: an activity it allows goes on to the policies; one it refuses is a 403 and nothing is recorded", async () => {
    const id = await profile(h(), { scope: "activity.type == 'ACTIVITY_TYPE_CREATE_USER_TAG' || activity.kind == 'STAMP_LOGIN'" });
    const { creds } = await session(h(), id);
    completed(
      await h().submit(
        "create_user_tag",
        "ACTIVITY_TYPE_CREATE_USER_TAG",
        { userTagName: `t-${newId().slice(0, 6)}`, userIds: [] },
        { as: creds },
      ),
      createUserTag,
    );
    const before = await activityCount(h());
    const refused = forbidden(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [] }, { as: creds }),
      /not allowed by the session's scope/,
    );
    assert.match(refused.message, new RegExp(id));
    assert.equal(await activityCount(h()), before);
    // Reads are not scoped.
    assert.equal((await h().query("whoami", {}, { as: creds })).status, 200);
    // Its refresh keeps the profile; one that would drop it is refused.
    forbidden(
      await h().submit("stamp_login", LOGIN, { publicKey: generateP256KeyPair().publicKey }, { as: creds }),
      /same sessionProfileId/,
    );
    const refreshed = completed(
      await h().submit("stamp_login", LOGIN, { publicKey: generateP256KeyPair().publicKey, sessionProfileId: id }, { as: creds }),
      stampLogin,
    );
    assert.equal(claimsOf(refreshed.session).session_profile_id, id);
    assert.equal(await activityCount(h()), before + 1);
  });

  it("scope: an evaluation error refuses (403), and a scope only narrows what policies allow", async () => {
    const erring = await profile(h(), { scope: "activity.params.nothing == 'x'" });
    const { creds } = await session(h(), erring);
    forbidden(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "e", userIds: [] }, { as: creds }),
      /could not be evaluated/,
    );
    // A non-root user with no policy: a scope of `true` does not make create_user_tag allowed.
    const [user] = await addUsersWithKeys(h(), 1);
    const all = await profile(h(), { scope: "true" });
    const userSession = (await session(h(), all, user!)).creds;
    forbidden(await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "n", userIds: [] }, { as: userSession }));
  });

  it("scope on votes: a scoped session approves only what its scope allows it to submit; a refused vote records nothing", async () => {
    const { a, b } = await twoOfTwo(h());
    // In a 2-of-2 organization a profile, too, needs both: a submits, b approves with its API key.
    const agreed = async (scope: string) => {
      const created = await h().submit(OP, TYPE, { sessionProfileName: "q", scope }, { as: a });
      const approved = await h().submit(
        "approve_activity",
        "ACTIVITY_TYPE_APPROVE_ACTIVITY",
        { fingerprint: created.json.activity.fingerprint },
        { as: b },
      );
      return completed(approved, createSessionProfile).sessionProfileId;
    };
    const signingOnly = await agreed("activity.action == 'SIGN'");
    const tagsToo = await agreed("activity.type == 'ACTIVITY_TYPE_CREATE_USER_TAG'");
    const pending = await h().submit(
      "create_user_tag",
      "ACTIVITY_TYPE_CREATE_USER_TAG",
      { userTagName: `v-${newId().slice(0, 6)}`, userIds: [] },
      { as: a },
    );
    assert.equal(pending.json.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");
    const { fingerprint, id } = pending.json.activity as { fingerprint: string; id: string };
    const narrow = (await session(h(), signingOnly, b)).creds;
    forbidden(await h().submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint }, { as: narrow }), /session's scope/);
    const after = (await h().query("get_activity", { activityId: id }, { as: a })).json.activity;
    assert.equal(after.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");
    assert.equal(after.votes.length, 1);
    const wide = (await session(h(), tagsToo, b)).creds;
    const approved = await h().submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint }, { as: wide });
    assert.equal(approved.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(approved.json));
  });
});

perEngine("create_session_profile cap", (h) => {
  it(`at most ${MAX_SESSION_PROFILES_PER_ORGANIZATION} per organization, also when created concurrently`, async () => {
    const org = await h().newOrg("Capped");
    const attempts = await Promise.all(
      Array.from({ length: MAX_SESSION_PROFILES_PER_ORGANIZATION + 5 }, (_, i) =>
        h().submit(OP, TYPE, { sessionProfileName: `p${i}`, scope: "true" }, { as: org }),
      ),
    );
    assert.equal(attempts.filter((r) => r.status === 200).length, MAX_SESSION_PROFILES_PER_ORGANIZATION);
    for (const r of attempts.filter((a) => a.status !== 200)) exhausted(r, /session profiles, the maximum/);
    assert.equal(
      ((await h().query("get_session_profiles", {}, { as: org })).json.sessionProfiles as Json[]).length,
      MAX_SESSION_PROFILES_PER_ORGANIZATION,
    );
  });
});
