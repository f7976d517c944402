// stamp_login: sessions for the stamping user (docs/logins.md §2), stamped by an API key, by a
// session key (core's refreshSession) and by an attested verification token (core's
// loginWithOtp, X-Stamp-Attested, docs/stamps.md §4).
import { after, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyStamper, SignatureFormat } from "@turnkey/api-key-stamper";
import { verifySessionJwtSignature } from "@turnkey/crypto";
import {
  addUsersWithKeys,
  completed,
  failsWith,
  forbidden,
  invalidRequest,
  perEngine,
  type Creds,
  type Harness,
  type Json,
  type Res,
} from "../helpers/inproc.ts";
import { mintVerificationToken, type MintedToken } from "../helpers/tokens.ts";
import { pollUntil } from "../helpers/raw-http.ts";
import { sinkPerHarness, startOtp } from "../helpers/smtp-sink.ts";
import { createSigilClient } from "@sigil/client";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { generateP256, privateScalar, type P256Private } from "../../src/crypto/p256.ts";
import { newId } from "../../src/store/util.ts";
import { createApiKeysV2 } from "../../src/activities/credentials/create_api_keys.ts";
import { verifyOtpV2 } from "../../src/activities/otp/verify_otp.ts";
import { createPolicyV3 } from "../../src/activities/policies/create_policy.ts";
import { stampLogin } from "../../src/activities/sessions/stamp_login.ts";
import { createSessionProfile } from "../../src/activities/sessions/create_session_profile.ts";
import { updateUserEmail } from "../../src/activities/users/update_user_email.ts";

const TYPE = "ACTIVITY_TYPE_STAMP_LOGIN";
const MAX_SECONDS = 3600;
// A real SMTP sink receives the OTP mails of the full flow (init_otp → verify_otp → login).
const s = sinkPerHarness({ sessionMaxSeconds: MAX_SECONDS });

/** fetch for @sigil/client, answered by the in-process app. */
const injectFetch = (h: Harness) =>
  (async (url: string) => {
    const r = await h.app.inject({ method: "GET", url: new URL(url).pathname });
    return new Response(r.body, { status: r.statusCode, headers: { "content-type": "application/json" } });
  }) as unknown as typeof fetch;

/** What core's parseSession reads: the payload through the browser's atob. */
function parseSession(token: string): Json {
  const [, payload] = token.split(".");
  return JSON.parse(atob(payload!)) as Json;
}

async function sessionJwtKey(h: Harness): Promise<string> {
  const res = await h.app.inject({ method: "GET", url: "/public/v1/discovery/keys" });
  assert.equal(res.statusCode, 200);
  const keys = (JSON.parse(res.body) as { keys: { purpose: string; publicKey: string; status: string }[] }).keys;
  const key = keys.find((k) => k.purpose === "SESSION_JWT" && k.status === "active");
  assert.ok(key, res.body);
  return key.publicKey;
}

/** Logs `as` in with a fresh key; returns the session, its key as Creds and the activity. */
async function login(
  h: Harness,
  as: Creds,
  params: Json = {},
  organizationId?: string,
): Promise<{ session: string; creds: Creds; res: Res }> {
  const key = generateP256KeyPair();
  const res = await h.submit(
    "stamp_login",
    TYPE,
    { publicKey: key.publicKey, expirationSeconds: "900", invalidateExisting: false, ...params },
    { as, ...(organizationId ? { organizationId } : {}) },
  );
  const session = completed(res, stampLogin).session;
  const claims = parseSession(session);
  return { session, creds: { organizationId: claims.organization_id, userId: claims.user_id, key }, res };
}

/** A session profile of `as`'s organization that allows everything. */
async function newProfile(h: Harness, as: Creds): Promise<string> {
  const res = await h.submit(
    "create_session_profile",
    "ACTIVITY_TYPE_CREATE_SESSION_PROFILE",
    { sessionProfileName: "all", scope: "true" },
    { as },
  );
  return completed(res, createSessionProfile).sessionProfileId;
}

async function subOrgWith(h: Harness, name: string, user: Json): Promise<{ orgId: string; userId: string }> {
  const res = await h.submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
    subOrganizationName: `${name}-${newId().slice(0, 6)}`,
    rootQuorumThreshold: 1,
    rootUsers: [{ userName: name, apiKeys: [], authenticators: [], oauthProviders: [], ...user }],
  });
  const r = completed(res, "createSubOrganizationResultV8");
  return { orgId: r.subOrganizationId, userId: r.rootUserIds[0] };
}

/** The body core's loginWithOtp sends (sdk-client-base stampLogin) and its X-Stamp-Attested header (AttestedStamper). */
async function attestedLogin(
  h: Harness,
  t: { token: string; key: P256Private },
  opts: {
    organizationId: string;
    signWith?: P256Private;
    stampKey?: string;
    tamper?: boolean;
    path?: string;
    type?: string;
    body?: string;
    timestampMs?: string;
  },
): Promise<Res> {
  const publicKey = t.key.publicCompressed;
  const body =
    opts.body ??
    JSON.stringify({
      parameters: { publicKey, expirationSeconds: "900", invalidateExisting: false },
      organizationId: opts.organizationId,
      timestampMs: opts.timestampMs ?? String(Date.now()),
      generateAppProofs: false,
      type: opts.type ?? TYPE,
    });
  const signer = opts.signWith ?? t.key;
  const stamper = new ApiKeyStamper({ apiPublicKey: signer.publicCompressed, apiPrivateKey: privateScalar(signer).toString("hex") });
  let signature = await stamper.sign(body, SignatureFormat.Der);
  // Flip the low bit of the second-to-last byte: always a change (overwriting it with a fixed
  // value left the signature intact whenever the byte already had that value).
  if (opts.tamper)
    signature = signature.slice(0, -4) + (parseInt(signature.slice(-4, -2), 16) ^ 1).toString(16).padStart(2, "0") + signature.slice(-2);
  const stamp = {
    publicKeyAttestation: t.token,
    scheme: "STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN",
    publicKey: opts.stampKey ?? publicKey,
    signature,
  };
  return h.post(opts.path ?? "/public/v1/submit/stamp_login", body, {
    "X-Stamp-Attested": Buffer.from(JSON.stringify(stamp)).toString("base64url"),
    "X-Client-Version": "@turnkey/core@2.8.1",
  });
}

async function sessionKeysOf(h: Harness, userId: string): Promise<number> {
  const rows = await h.service.store.db
    .selectFrom("api_keys")
    .select("id")
    .where("user_id", "=", userId)
    .where("credential_type", "=", "CREDENTIAL_TYPE_LOGIN")
    .execute();
  return rows.length;
}

perEngine(
  "stamp_login",
  (h) => {
    after(s.stop);

    it("returns a session JWT the SDK verifies with the published SESSION_JWT key, with the claims of docs/logins.md §2.3", async () => {
      const before = Math.floor(Date.now() / 1000);
      const { session, creds, res } = await login(h(), h().root);
      assert.ok(await verifySessionJwtSignature(session, await sessionJwtKey(h())));
      assert.equal(await verifySessionJwtSignature(session, generateP256().publicUncompressed), false);
      const [header] = session.split(".");
      assert.deepEqual(JSON.parse(Buffer.from(header!, "base64url").toString()), { alg: "ES256", typ: "JWT" });
      const claims = parseSession(session);
      assert.equal(typeof claims.exp, "number");
      assert.ok(claims.exp >= before + 900 && claims.exp <= before + 902, String(claims.exp));
      assert.equal(claims.public_key, creds.key.publicKey);
      assert.equal(claims.session_type, "SESSION_TYPE_READ_WRITE");
      assert.equal(claims.user_id, h().root.userId);
      assert.equal(claims.organization_id, h().root.organizationId);
      assert.equal(claims.session_profile_id, undefined);
      const activity = res.json.activity as Json;
      assert.deepEqual(activity.intent.stampLoginIntent.publicKey, creds.key.publicKey);
    });

    it("the session key stamps queries (whoami, list_suborgs) and the official SDK's calls", async () => {
      const { creds } = await login(h(), h().root);
      const who = await h().query("whoami", {}, { as: creds });
      assert.equal(who.status, 200, JSON.stringify(who.json));
      assert.equal(who.json.userId, h().root.userId);
      const subs = await h().query("list_suborgs", {}, { as: creds });
      assert.equal(subs.status, 200, JSON.stringify(subs.json));
      assert.ok(Array.isArray(subs.json.organizationIds));
      const viaSdk = await (await h().sdk(creds)).getWhoami({});
      assert.equal(viaSdk.userId, h().root.userId);
      // The key is a LOGIN credential of the user, expiring.
      const keys = await h().query("get_api_keys", { userId: h().root.userId });
      const mine = (keys.json.apiKeys as Json[]).find((k) => k.credential.publicKey === creds.key.publicKey);
      assert.equal(mine?.credential.type, "CREDENTIAL_TYPE_LOGIN");
      assert.equal(mine?.expirationSeconds, "900");
    });

    it("refresh: a session key stamps stamp_login for a new key (core's refreshSession)", async () => {
      const first = await login(h(), h().root);
      const second = await login(h(), first.creds);
      assert.equal(parseSession(second.session).user_id, h().root.userId);
      assert.notEqual(second.creds.key.publicKey, first.creds.key.publicKey);
      // Both sessions live (no invalidateExisting).
      assert.equal((await h().query("whoami", {}, { as: first.creds })).status, 200);
      assert.equal((await h().query("whoami", {}, { as: second.creds })).status, 200);
    });

    it("invalidateExisting: the user's older sessions are gone (401 could not find public key …)", async () => {
      const older = await login(h(), h().root);
      const newer = await login(h(), h().root, { invalidateExisting: true });
      failsWith(
        await h().query("whoami", {}, { as: older.creds }),
        401,
        16,
        "PUBLIC_KEY_NOT_FOUND",
        /could not find public key in organization or its parent organization/,
      );
      assert.equal((await h().query("whoami", {}, { as: newer.creds })).status, 200);
      // The root's API key is not a session: it still works.
      assert.equal((await h().query("whoami")).status, 200);
    });

    it("10 expiring keys per user, sessions included (docs/organizations.md §3.2): an 11th login evicts the oldest expiring API key; an 11th expiring API key evicts the oldest session", async () => {
      const [u] = await addUsersWithKeys(h(), 1);
      const expiringKeys = Array.from({ length: 10 }, (_, i) => ({
        apiKeyName: `exp-${i}`,
        publicKey: generateP256KeyPair().publicKey,
        curveType: "API_KEY_CURVE_P256",
        expirationSeconds: "600",
      }));
      completed(
        await h().submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", { userId: u!.userId, apiKeys: expiringKeys }),
        createApiKeysV2,
      );
      const expiringRows = () =>
        h()
          .service.store.db.selectFrom("api_keys")
          .select(["id", "public_key", "credential_type"])
          .where("user_id", "=", u!.userId)
          .where("expires_at", "is not", null)
          .orderBy("created_at")
          .orderBy("id")
          .execute();
      const [oldest] = await expiringRows();
      // The login is not refused: the oldest expiring key (not a session) makes room.
      const session = await login(h(), u!);
      let rows = await expiringRows();
      assert.equal(rows.length, 10);
      assert.ok(!rows.some((r) => r.id === oldest!.id), "the oldest expiring API key was evicted");
      assert.ok(rows.some((r) => r.public_key === session.creds.key.publicKey && r.credential_type === "CREDENTIAL_TYPE_LOGIN"));
      assert.equal((await h().query("whoami", {}, { as: session.creds })).status, 200);
      // Nine more logins replace the remaining API keys; then an expiring API key evicts the oldest session.
      for (let i = 0; i < 9; i++) await login(h(), u!);
      rows = await expiringRows();
      assert.deepEqual(
        rows.map((r) => r.credential_type),
        Array(10).fill("CREDENTIAL_TYPE_LOGIN"),
      );
      assert.equal(rows[0]!.public_key, session.creds.key.publicKey);
      completed(
        await h().submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", {
          userId: u!.userId,
          apiKeys: [{ ...expiringKeys[0]!, publicKey: generateP256KeyPair().publicKey }],
        }),
        createApiKeysV2,
      );
      rows = await expiringRows();
      assert.equal(rows.length, 10);
      assert.ok(!rows.some((r) => r.public_key === session.creds.key.publicKey));
      failsWith(await h().query("whoami", {}, { as: session.creds }), 401, 16, "PUBLIC_KEY_NOT_FOUND");
      // The user's long-lived key is untouched throughout.
      assert.equal((await h().query("whoami", {}, { as: u! })).status, 200);
    });

    it('expirationSeconds "1": the session key is refused as expired once the second has passed', async () => {
      const { creds, session } = await login(h(), h().root, { expirationSeconds: "1" });
      assert.ok(parseSession(session).exp <= Math.floor(Date.now() / 1000) + 1);
      const res = await pollUntil("the session to expire", 5000, 100, async () => {
        const r = await h().query("whoami", {}, { as: creds });
        return r.status === 401 ? r : undefined;
      });
      failsWith(res, 401, 16, "API_KEY_EXPIRED", /Unauthenticated desc = expired api key publicKey/);
    });

    it("expirationSeconds above the configured maximum, 0, or not a number: 400 naming the field", async () => {
      for (const bad of [String(MAX_SECONDS + 1), "0", "abc", "-5", "1.5"]) {
        const res = await h().submit("stamp_login", TYPE, { publicKey: generateP256KeyPair().publicKey, expirationSeconds: bad });
        invalidRequest(res, /expiration/, ["parameters.expirationSeconds"]);
      }
      const ok = await h().submit("stamp_login", TYPE, {
        publicKey: generateP256KeyPair().publicKey,
        expirationSeconds: String(MAX_SECONDS),
      });
      completed(ok, stampLogin);
    });

    it("validates publicKey and sessionProfileId", async () => {
      invalidRequest(await h().submit("stamp_login", TYPE, {}), undefined, ["parameters.publicKey"]);
      invalidRequest(await h().submit("stamp_login", TYPE, { publicKey: "02" + "zz".repeat(32) }), undefined, ["parameters.publicKey"]);
      invalidRequest(await h().submit("stamp_login", TYPE, { publicKey: "04" + "00".repeat(64) }), /publicKey/);
      invalidRequest(
        await h().submit("stamp_login", TYPE, { publicKey: generateP256KeyPair().publicKey, sessionProfileId: "x" }),
        undefined,
        ["parameters.sessionProfileId"],
      );
      // A key that is already a credential of the organization cannot become a session.
      failsWith(
        await h().submit("stamp_login", TYPE, { publicKey: h().root.key.publicKey }),
        409,
        6,
        "REQUEST_INVALID",
        /already a credential/,
      );
    });

    it("sessionProfileId: in the JWT, on the session key (credential.sessionProfileId), and as the policy param session_profile_id", async () => {
      const profile = await newProfile(h(), h().root);
      const { session, creds } = await login(h(), h().root, { sessionProfileId: profile });
      assert.equal(parseSession(session).session_profile_id, profile);
      // An id no organization of the chain made is not found, and nothing is logged in.
      const unknown = await h().submit("stamp_login", TYPE, {
        publicKey: generateP256KeyPair().publicKey,
        sessionProfileId: "11111111-1111-4111-8111-111111111111",
      });
      failsWith(unknown, 404, 5, "REQUEST_INVALID", /no session profile/);
      const key = await h().query("get_api_keys", { userId: h().root.userId });
      const mine = (key.json.apiKeys as Json[]).find((k) => k.credential.publicKey === creds.key.publicKey);
      assert.equal(mine?.credential.sessionProfileId, profile);
    });

    it("policy facts: resource AUTH, action CREATE, kind STAMP_LOGIN, params.session_profile_id ('' when absent)", async () => {
      const org = await h().newOrg("Policy Org");
      // Not a root user: the root quorum (1/1) would bypass policies.
      const [user] = await addUsersWithKeys(h(), 1, org);
      const deny = await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        {
          policyName: "no profile-less logins",
          effect: "EFFECT_DENY",
          notes: "",
          condition:
            "activity.resource == 'AUTH' && activity.action == 'CREATE' && activity.kind == 'STAMP_LOGIN' && activity.params.session_profile_id == ''",
        },
        { as: org },
      );
      completed(deny, createPolicyV3);
      const denied = await h().submit("stamp_login", TYPE, { publicKey: generateP256KeyPair().publicKey }, { as: user! });
      forbidden(denied);
      assert.equal(await sessionKeysOf(h(), user!.userId), 0);
      // With a profile the deny does not apply, and a user logs itself in without any allowing policy (docs/policy-language.md §6.8).
      await login(h(), user!, { sessionProfileId: await newProfile(h(), org) });
      assert.equal(await sessionKeysOf(h(), user!.userId), 1);
    });

    it("a user of a sub-organization is logged in in their own organization; a parent's key logs in the parent's user", async () => {
      const key = generateP256KeyPair();
      const sub = await subOrgWith(h(), "subuser", {
        apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
      });
      const subUser: Creds = { organizationId: sub.orgId, userId: sub.userId, key };
      // Stamped with the sub-organization user's key, targeting the parent (as loginWithPasskey does).
      const viaParent = await login(h(), subUser, {}, h().root.organizationId);
      const claims = parseSession(viaParent.session);
      assert.deepEqual([claims.user_id, claims.organization_id], [sub.userId, sub.orgId]);
      assert.equal((await h().query("whoami", {}, { as: viaParent.creds })).json.organizationId, sub.orgId);
      // The parent's own key against the sub-organization: let through the parent check (docs/request-path.md §5), and
      // the session is the parent user's, in the parent organization.
      const parent = await login(h(), h().root, {}, sub.orgId);
      assert.deepEqual(
        [parseSession(parent.session).user_id, parseSession(parent.session).organization_id],
        [h().root.userId, h().root.organizationId],
      );
    });

    it("the same body twice is one activity", async () => {
      const body = { publicKey: generateP256KeyPair().publicKey };
      const timestampMs = String(Date.now());
      const a = await h().submit("stamp_login", TYPE, body, { timestampMs });
      const b = await h().submit("stamp_login", TYPE, body, { timestampMs });
      assert.equal(a.json.activity.id, b.json.activity.id);
      assert.equal(b.json.activity.result.stampLoginResult.session, a.json.activity.result.stampLoginResult.session);
    });

    // ---- X-Stamp-Attested (core's loginWithOtp) ----

    let alice: { orgId: string; userId: string };
    const aliceEmail = `alice-${newId().slice(0, 8)}@example.com`;
    const aliceToken = (
      over: { key?: P256Private; lifetimeSeconds?: number; organizationId?: string; contact?: string } = {},
    ): Promise<MintedToken> => mintVerificationToken(h(), { contact: over.contact ?? aliceEmail.toUpperCase(), ...over });

    it("attested: the parent's id as organizationId, the user in a sub-organization — logged in there, once per token", async () => {
      alice = await subOrgWith(h(), "alice", { userEmail: aliceEmail });
      const t = await aliceToken();
      const res = await attestedLogin(h(), t, { organizationId: h().root.organizationId });
      const session = completed(res, stampLogin).session;
      assert.ok(await verifySessionJwtSignature(session, await sessionJwtKey(h())));
      const claims = parseSession(session);
      assert.deepEqual([claims.user_id, claims.organization_id, claims.public_key], [alice.userId, alice.orgId, t.key.publicCompressed]);
      // Recorded in the user's organization, the vote naming the token as the credential.
      const activity = res.json.activity as Json;
      assert.equal(activity.organizationId, alice.orgId);
      assert.equal(activity.votes[0].scheme, "STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN");
      assert.equal(activity.votes[0].publicKey, t.key.publicCompressed);
      // The session key (the token's key) stamps as the user.
      const creds: Creds = {
        organizationId: alice.orgId,
        userId: alice.userId,
        key: { publicKey: t.key.publicCompressed, privateKey: privateScalar(t.key).toString("hex") } as P256KeyPair,
      };
      assert.equal((await h().query("whoami", {}, { as: creds })).json.userId, alice.userId);
      // A second login with the same token is refused, and creates no session.
      const sessions = await sessionKeysOf(h(), alice.userId);
      failsWith(
        await attestedLogin(h(), t, { organizationId: h().root.organizationId }),
        401,
        16,
        "UNAUTHENTICATED",
        /already been used to log in/,
      );
      assert.equal(await sessionKeysOf(h(), alice.userId), sessions);
      const row = await h()
        .service.store.db.selectFrom("verification_tokens")
        .select("login_used_at")
        .where("id", "=", t.claims.id)
        .executeTakeFirstOrThrow();
      assert.ok(row.login_used_at);
    });

    it("attested: two logins racing with one token — exactly one session", async () => {
      const t = await aliceToken();
      const sessions = await sessionKeysOf(h(), alice.userId);
      const now = Date.now();
      // Distinct bodies (timestamps): not one activity by fingerprint.
      const results = await Promise.all(
        [0, 1, 2].map((i) => attestedLogin(h(), t, { organizationId: h().root.organizationId, timestampMs: String(now + i) })),
      );
      assert.deepEqual(
        results.map((r) => r.status).filter((st) => st === 200).length,
        1,
        JSON.stringify(results.map((r) => [r.status, r.json.message])),
      );
      for (const r of results.filter((x) => x.status !== 200)) {
        assert.ok([400, 401].includes(r.status), JSON.stringify(r.json));
        assert.match(String(r.json.message), /already been used to log in/);
      }
      assert.equal(await sessionKeysOf(h(), alice.userId), sessions + 1);
    });

    it("attested: the sub-organization's own id works too", async () => {
      const t = await aliceToken();
      const res = await attestedLogin(h(), t, { organizationId: alice.orgId });
      assert.equal(parseSession(completed(res, stampLogin).session).user_id, alice.userId);
    });

    it("attested: refused — token bound to another key, tampered signature, expired token, unknown token signer", async () => {
      const sessions = await sessionKeysOf(h(), alice.userId);
      const org = h().root.organizationId;
      // The stamp signed and named by a key the token is not bound to.
      const other = generateP256();
      const t1 = await aliceToken();
      failsWith(
        await attestedLogin(h(), t1, { organizationId: org, signWith: other, stampKey: other.publicCompressed }),
        401,
        16,
        "UNAUTHENTICATED",
        /not the key the verification token is bound to/,
      );
      // The stamp names the token's key but another key signed.
      failsWith(
        await attestedLogin(h(), t1, { organizationId: org, signWith: other }),
        401,
        16,
        "SIGNATURE_INVALID",
        /could not verify attested stamp signature/,
      );
      failsWith(await attestedLogin(h(), t1, { organizationId: org, tamper: true }), 401, 16, "SIGNATURE_INVALID");
      const expired = await aliceToken({ lifetimeSeconds: -5 });
      failsWith(await attestedLogin(h(), expired, { organizationId: org }), 401, 16, "UNAUTHENTICATED", /expired/);
      // A token in the right form signed by a key this service never published.
      const forged = { ...t1, token: t1.token.split(".").slice(0, 2).join(".") + "." + Buffer.alloc(64, 7).toString("base64url") };
      failsWith(await attestedLogin(h(), forged, { organizationId: org }), 401, 16, "UNAUTHENTICATED", /signature/);
      failsWith(await attestedLogin(h(), { ...t1, token: "not-a-jwt" }, { organizationId: org }), 401, 16, "UNAUTHENTICATED", /malformed/);
      assert.equal(await sessionKeysOf(h(), alice.userId), sessions);
    });

    it("attested: contact not found; the contact in two sub-organizations is CREDENTIAL_CONFLICT", async () => {
      const org = h().root.organizationId;
      failsWith(
        await attestedLogin(h(), await aliceToken({ contact: `nobody-${newId()}@example.com` }), { organizationId: org }),
        401,
        16,
        "CREDENTIAL_NOT_FOUND",
        /no user with the verified email/,
      );
      const shared = `shared-${newId().slice(0, 8)}@example.com`;
      const a = await subOrgWith(h(), "twin-a", { userEmail: shared });
      const b = await subOrgWith(h(), "twin-b", { userEmail: shared });
      failsWith(
        await attestedLogin(h(), await aliceToken({ contact: shared }), { organizationId: org }),
        401,
        16,
        "CREDENTIAL_CONFLICT",
        /more than one suborg/,
      );
      // Named precisely, each sub-organization logs its own user in.
      const inA = await attestedLogin(h(), await aliceToken({ contact: shared }), { organizationId: a.orgId });
      assert.equal(parseSession(completed(inA, stampLogin).session).user_id, a.userId);
      assert.equal(await sessionKeysOf(h(), b.userId), 0);
    });

    it("attested: a contact the sub-organization wrote itself resolves no login by the parent's id; one naming its own organization works and verifies it", async () => {
      const org = h().root.organizationId;
      const address = `self-${newId().slice(0, 8)}@example.com`;
      const key = generateP256KeyPair();
      const self = await subOrgWith(h(), "self", {
        apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
      });
      const me: Creds = { organizationId: self.orgId, userId: self.userId, key };
      completed(
        await h().submit("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL", { userId: me.userId, userEmail: address }, { as: me }),
        updateUserEmail,
      );
      const verifiedAt = async () =>
        (await h().service.store.db.selectFrom("users").select("email_verified_at").where("id", "=", self.userId).executeTakeFirstOrThrow())
          .email_verified_at;
      failsWith(
        await attestedLogin(h(), await aliceToken({ contact: address }), { organizationId: org }),
        401,
        16,
        "CREDENTIAL_NOT_FOUND",
        /no user with the verified email/,
      );
      assert.equal(await sessionKeysOf(h(), self.userId), 0);
      assert.equal(await verifiedAt(), null);
      // Named precisely: logged in, and the contact is now proven.
      const own = await attestedLogin(h(), await aliceToken({ contact: address.toUpperCase() }), { organizationId: self.orgId });
      assert.equal(parseSession(completed(own, stampLogin).session).user_id, self.userId);
      assert.ok(Number(await verifiedAt()) > 0);
      const later = await attestedLogin(h(), await aliceToken({ contact: address }), { organizationId: org });
      assert.equal(parseSession(completed(later, stampLogin).session).user_id, self.userId);
    });

    it("an API key copied into another sub-organization causes no conflict below the parent: the oldest registration is the one", async () => {
      const key = generateP256KeyPair();
      const apiKey = { apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" };
      const owner = await subOrgWith(h(), "key-owner", { apiKeys: [apiKey] });
      const otherKey = generateP256KeyPair();
      const copier = await subOrgWith(h(), "key-copier", { apiKeys: [{ ...apiKey, publicKey: otherKey.publicKey }] });
      const copierCreds: Creds = { organizationId: copier.orgId, userId: copier.userId, key: otherKey };
      // create_api_keys asks for no proof of possession: the copier registers the owner's public key.
      completed(
        await h().submit(
          "create_api_keys",
          "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
          { userId: copier.userId, apiKeys: [{ ...apiKey, apiKeyName: "copy" }] },
          { as: copierCreds },
        ),
        createApiKeysV2,
      );
      const { session } = await login(h(), { organizationId: owner.orgId, userId: owner.userId, key }, {}, h().root.organizationId);
      assert.deepEqual([parseSession(session).user_id, parseSession(session).organization_id], [owner.userId, owner.orgId]);
    });

    /** A sub-organization the backend made with a key of its own, where its user then registers `apiKey` (untrusted, unproved). */
    const tenantCopying = async (name: string, apiKey: Json) => {
      const ownKey = generateP256KeyPair();
      const t = await subOrgWith(h(), name, {
        apiKeys: [{ apiKeyName: "own", publicKey: ownKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
      });
      const creds: Creds = { organizationId: t.orgId, userId: t.userId, key: ownKey };
      completed(
        await h().submit(
          "create_api_keys",
          "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
          { userId: t.userId, apiKeys: [{ ...apiKey, apiKeyName: `copy-${name}` }] },
          { as: creds },
        ),
        createApiKeysV2,
      );
      return t;
    };
    const keyRow = (organizationId: string, publicKey: string) =>
      h()
        .service.store.db.selectFrom("api_keys")
        .select(["trusted", "proved_at"])
        .where("organization_id", "=", organizationId)
        .where("public_key_normalized", "=", publicKey.toLowerCase())
        .executeTakeFirstOrThrow();

    it("a key a tenant registered before the backend did: the backend's registration is the one below the parent (docs/login-lookups.md §3.2)", async () => {
      const key = generateP256KeyPair();
      const apiKey = { apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" };
      const copier = await tenantCopying("early-copier", apiKey);
      const owner = await subOrgWith(h(), "late-owner", { apiKeys: [apiKey] });
      const { session } = await login(h(), { organizationId: owner.orgId, userId: owner.userId, key }, {}, h().root.organizationId);
      assert.deepEqual([parseSession(session).user_id, parseSession(session).organization_id], [owner.userId, owner.orgId]);
      assert.equal(await sessionKeysOf(h(), copier.userId), 0);
      assert.deepEqual(
        [Number((await keyRow(owner.orgId, key.publicKey)).trusted), Number((await keyRow(copier.orgId, key.publicKey)).trusted)],
        [1, 0],
      );
    });

    it("two fresh registrations nobody vouched for or used: a stamp naming the parent is refused (401, nothing written); once one has stamped in its own organization it is proved and is the one", async () => {
      const key = generateP256KeyPair();
      const apiKey = { apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" };
      const a = await tenantCopying("fresh-a", apiKey);
      const b = await tenantCopying("fresh-b", apiKey);
      const asA: Creds = { organizationId: a.orgId, userId: a.userId, key };
      const refused = await h().submit(
        "stamp_login",
        TYPE,
        { publicKey: generateP256KeyPair().publicKey, expirationSeconds: "900" },
        { as: asA, organizationId: h().root.organizationId },
      );
      failsWith(refused, 401, 16, "UNAUTHENTICATED", /more than one sub-organization recently/);
      assert.deepEqual([await sessionKeysOf(h(), a.userId), await sessionKeysOf(h(), b.userId)], [0, 0]);
      assert.equal((await keyRow(a.orgId, key.publicKey)).proved_at, null, "a refused stamp proves nothing");
      // The holder stamps naming a's organization: that row is proved (at the first stamp only) …
      await login(h(), asA);
      const provedAt = (await keyRow(a.orgId, key.publicKey)).proved_at;
      assert.ok(Number(provedAt) > 0);
      await login(h(), asA);
      assert.equal((await keyRow(a.orgId, key.publicKey)).proved_at, provedAt, "proved once");
      assert.equal((await keyRow(b.orgId, key.publicKey)).proved_at, null);
      // … and wins below the parent over b's fresh copy.
      const { session } = await login(h(), asA, {}, h().root.organizationId);
      assert.equal(parseSession(session).organization_id, a.orgId);
      assert.equal(await sessionKeysOf(h(), b.userId), 0);
    });

    it("attested: a token issued by a sub-organization does not serve its sibling or parent's users", async () => {
      const sibling = await subOrgWith(h(), "sibling", { userEmail: `sib-${newId().slice(0, 6)}@example.com` });
      const rows = await h()
        .service.store.db.selectFrom("users")
        .select("email")
        .where("id", "=", sibling.userId)
        .executeTakeFirstOrThrow();
      const t = await mintVerificationToken(h(), { contact: rows.email!, organizationId: alice.orgId });
      failsWith(
        await attestedLogin(h(), t, { organizationId: h().root.organizationId }),
        401,
        16,
        "UNAUTHENTICATED",
        /issued by organization/,
      );
    });

    it("attested: any other activity, a vote or a query is refused, and nothing is recorded", async () => {
      const t = await aliceToken();
      const org = alice.orgId;
      const tag = JSON.stringify({
        parameters: { userTagName: "x", userIds: [] },
        organizationId: org,
        timestampMs: String(Date.now()),
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      });
      failsWith(
        await attestedLogin(h(), t, { organizationId: org, path: "/public/v1/submit/create_user_tag", body: tag }),
        401,
        16,
        "UNAUTHENTICATED",
        /may only sign ACTIVITY_TYPE_STAMP_LOGIN/,
      );
      const vote = JSON.stringify({
        parameters: { fingerprint: "0".repeat(64) },
        organizationId: org,
        timestampMs: String(Date.now()),
        type: "ACTIVITY_TYPE_APPROVE_ACTIVITY",
      });
      failsWith(
        await attestedLogin(h(), t, { organizationId: org, path: "/public/v1/submit/approve_activity", body: vote }),
        401,
        16,
        "UNAUTHENTICATED",
        /may only sign/,
      );
      for (const q of ["whoami", "get_user"]) {
        const body = JSON.stringify({ organizationId: org, userId: alice.userId });
        failsWith(
          await attestedLogin(h(), t, { organizationId: org, path: `/public/v1/query/${q}`, body }),
          401,
          16,
          "UNAUTHENTICATED",
          /may only sign/,
        );
      }
      // Even a query body that claims to be a stamp_login.
      const sneaky = JSON.stringify({ organizationId: org, type: TYPE, parameters: {}, timestampMs: String(Date.now()) });
      failsWith(
        await attestedLogin(h(), t, { organizationId: org, path: "/public/v1/query/whoami", body: sneaky }),
        401,
        16,
        "UNAUTHENTICATED",
        /may only sign/,
      );
      const acts = await h()
        .service.store.db.selectFrom("activities")
        .select("id")
        .where("organization_id", "=", org)
        .where("type", "=", "ACTIVITY_TYPE_CREATE_USER_TAG")
        .execute();
      assert.equal(acts.length, 0);
      // The token was not used up by any of these: it still logs in.
      completed(await attestedLogin(h(), t, { organizationId: org }), stampLogin);
    });

    it("core's OTP flow with @sigil/client: init_otp → encryptOtpCode (published key) → verify_otp → attested stamp_login", async () => {
      const contact = `otp-${newId().slice(0, 8)}@example.com`;
      const sub = await subOrgWith(h(), "otp-user", { userEmail: contact });
      // The parent starts the flow (as the auth proxy would), for a user of its sub-organization.
      const otp = await startOtp(h(), s.sink(), contact);
      const client = createSigilClient({ baseUrl: "http://sigil.test", fetch: injectFetch(h()) });
      const key = generateP256();
      const encryptedOtpBundle = await client.encryptOtpCode({
        otpCode: otp.code,
        otpEncryptionTargetBundle: otp.bundle,
        publicKey: key.publicCompressed,
      });
      const verified = await h().submit("verify_otp", "ACTIVITY_TYPE_VERIFY_OTP_V2", { otpId: otp.otpId, encryptedOtpBundle });
      const token = completed(verified, verifyOtpV2).verificationToken;
      const tokenClaims = await client.verifyVerificationToken(token);
      assert.deepEqual([tokenClaims.public_key, tokenClaims.contact.toLowerCase()], [key.publicCompressed, contact]);
      const res = await attestedLogin(h(), { token, key }, { organizationId: h().root.organizationId });
      const sessionClaims = await client.verifySessionJwt(completed(res, stampLogin).session);
      assert.deepEqual(
        [sessionClaims.user_id, sessionClaims.organization_id, sessionClaims.public_key],
        [sub.userId, sub.orgId, key.publicCompressed],
      );
      // A wrong code encrypted the same way is refused by verify_otp with the message core matches.
      const again = await startOtp(h(), s.sink(), contact);
      const wrong = await client.encryptOtpCode({
        otpCode: again.code === "000000000" ? "111111111" : "000000000",
        otpEncryptionTargetBundle: again.bundle,
        publicKey: key.publicCompressed,
      });
      const refused = await h().submit("verify_otp", "ACTIVITY_TYPE_VERIFY_OTP_V2", { otpId: again.otpId, encryptedOtpBundle: wrong });
      assert.ok(refused.status >= 400 && String(refused.json.message).includes("Invalid OTP code"), JSON.stringify(refused.json));
    });

    it("attested: an OIDC stamp whose signature does not verify is refused (test/ops/oauth_login.ts covers the scheme); a malformed header as malformed", async () => {
      const body = JSON.stringify({
        parameters: { publicKey: generateP256KeyPair().publicKey },
        organizationId: h().root.organizationId,
        timestampMs: String(Date.now()),
        type: TYPE,
      });
      const stamp = (o: Json) => ({ "X-Stamp-Attested": Buffer.from(JSON.stringify(o)).toString("base64url") });
      const oidc = await h().post(
        "/public/v1/submit/stamp_login",
        body,
        stamp({
          publicKeyAttestation: "a.b.c",
          scheme: "STAMP_ATTESTED_SCHEME_P256_OIDC",
          publicKey: generateP256KeyPair().publicKey,
          signature: "3044",
        }),
      );
      failsWith(oidc, 401, 16, "SIGNATURE_INVALID", /could not verify attested stamp signature/);
      failsWith(
        await h().post("/public/v1/submit/stamp_login", body, stamp({ scheme: "__proto__" })),
        401,
        16,
        "UNAUTHENTICATED",
        /malformed attested stamp/,
      );
      failsWith(
        await h().post(
          "/public/v1/submit/stamp_login",
          body,
          stamp({ publicKeyAttestation: "x", scheme: "toString", publicKey: "02", signature: "00" }),
        ),
        401,
        16,
        "UNAUTHENTICATED",
        /unsupported attestation scheme/,
      );
      failsWith(
        await h().post("/public/v1/submit/stamp_login", body, { "X-Stamp-Attested": "%%%" }),
        401,
        16,
        "UNAUTHENTICATED",
        /base64url/,
      );
    });
  },
  undefined,
  s.options,
);
