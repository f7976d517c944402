// OAuth end to end (docs/oauth.md), on both engines, against a real OAuth 2.0 /
// OIDC server on loopback (the `oidc-provider` package, test/helpers/oidc-server.ts): a child-
// process Sigil configured with SIGIL_PUBLIC_URL = its own URL, SIGIL_OAUTH_PROVIDERS_FILE pointing
// X, Discord and the generic OIDC provider at that server and trusting its id_tokens, and the
// official SDK clients. Codes come from a real PKCE authorization-code flow driven without a
// browser; Sigil's tokens are verified with `jose` against its published JWKS, the bearer token is
// decrypted with @turnkey/crypto, and core's attested-stamp login is built by hand as core sends it.
import { describe, it, before, after, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createHash, randomBytes } from "node:crypto";
import pg from "pg";
import { Turnkey } from "@turnkey/sdk-server";
import { decryptCredentialBundle, encryptOauth2ClientSecret } from "@turnkey/crypto";
import { ApiKeyStamper, SignatureFormat } from "@turnkey/api-key-stamper";
import { createRemoteJWKSet, decodeJwt, jwtVerify } from "jose";
import {
  engines,
  freePort,
  newInstance,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { OidcServer, type Account, type OidcClient } from "../helpers/oidc-server.ts";
import { generateP256, privateScalar } from "../../src/crypto/p256.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";

/** Sigil's provider-call deadline in these tests (SIGIL_OAUTH_TIMEOUT_MS). */
const TIMEOUT_MS = 2000;

/** docs/oauth.md §4.3: sha256 hex of the public key's hex TEXT. */
const nonceOf = (publicKeyHex: string) => createHash("sha256").update(publicKeyHex, "utf8").digest("hex");
const secret = () => `cs-${randomBytes(24).toString("base64url")}`;

const ACCOUNTS: Account[] = ["alice", "bob", "carol", "dave", "erin", "frank", "gina", "hank", "ivan", "judy", "zed"].map((id) => ({
  id: `${id}-${randomBytes(3).toString("hex")}`,
  username: `${id}_handle`,
  name: id[0]!.toUpperCase() + id.slice(1),
}));
const acct = (name: string) => ACCOUNTS.find((a) => a.id.startsWith(`${name}-`))!.id;

/** The authorization server's clients: Sigil's credentials (X, Discord, faulty ones) and relying parties whose id_tokens Sigil trusts. */
const clientList = (): OidcClient[] => [
  { clientId: "sigil-x", clientSecret: secret() },
  { clientId: "sigil-discord", clientSecret: secret() },
  { clientId: "sigil-oidc", clientSecret: secret() },
  { clientId: "fault-token-500", clientSecret: secret(), fault: { at: "token", kind: "500" } },
  { clientId: "fault-token-garbage", clientSecret: secret(), fault: { at: "token", kind: "garbage" } },
  { clientId: "fault-userinfo-500", clientSecret: secret(), fault: { at: "userinfo", kind: "500" } },
  { clientId: "fault-userinfo-garbage", clientSecret: secret(), fault: { at: "userinfo", kind: "garbage" } },
  { clientId: "fault-userinfo-hang", clientSecret: secret(), fault: { at: "userinfo", kind: "hang" } },
  { clientId: "rp-a", clientSecret: secret() },
  { clientId: "rp-b", clientSecret: secret() },
  { clientId: "rp-expiring", clientSecret: secret() },
];

interface Signed {
  body: string;
  stamp: { stampHeaderName: string; stampHeaderValue: string };
  url: string;
}
interface Answer {
  status: number;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** A request the SDK stamped, sent as the SDK would, answered with its HTTP status and body. */
async function send(signed: Signed | undefined): Promise<Answer> {
  assert.ok(signed, "the SDK stamped the request");
  const res = await fetch(signed.url, {
    method: "POST",
    body: signed.body,
    headers: { "content-type": "application/json", [signed.stamp.stampHeaderName]: signed.stamp.stampHeaderValue },
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

/** A clear client error: 4xx with a message (never a 5xx, never an empty answer). */
function assertClientError(a: Answer, pattern?: RegExp, t?: TestContext): void {
  t?.diagnostic(`${a.status} ${String(a.json?.message ?? a.text).slice(0, 300)}`);
  assert.ok(a.status >= 400 && a.status < 500, `expected a 4xx, got ${a.status}: ${a.text}`);
  assert.equal(typeof a.json?.message, "string", a.text);
  if (pattern) assert.match(a.json.message as string, pattern, a.text);
}

for (const spec of engines()) {
  describe(`OAuth 2.0 / OIDC end to end against oidc-provider [${spec.name}]`, { skip: spec.skip }, () => {
    let oidc: OidcServer;
    let rogue: OidcServer;
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    let publicUrl: string;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let parent: any;
    /** Sigil's OAuth 2.0 credential id per client id. */
    const creds = new Map<string, string>();
    /** Client secrets and bearer tokens: none may be at rest or in the logs. */
    const secrets = new Set<string>();

    before(async () => {
      oidc = await OidcServer.start(clientList(), ACCOUNTS);
      // A second, equally real issuer that Sigil is NOT configured to trust.
      rogue = await OidcServer.start([{ clientId: "rp-u", clientSecret: secret() }], ACCOUNTS);
      const port = await freePort();
      publicUrl = `http://127.0.0.1:${port}`;
      inst = await newInstance(spec.name, { LOG_LEVEL: "trace" });
      const providersFile = path.join(inst.dataDir, "oauth-providers.json");
      writeFileSync(
        providersFile,
        JSON.stringify({
          providers: {
            OAUTH2_PROVIDER_X: { tokenUrl: oidc.tokenUrl, userInfoUrl: `${oidc.issuer}/2/users/me` },
            OAUTH2_PROVIDER_DISCORD: { tokenUrl: oidc.tokenUrl, userInfoUrl: `${oidc.issuer}/api/users/@me` },
            OAUTH2_PROVIDER_OIDC: { tokenUrl: oidc.tokenUrl, userInfoUrl: `${oidc.issuer}/me` },
          },
          issuers: [{ issuer: oidc.issuer, jwksUrl: oidc.jwksUrl }],
        }),
      );
      Object.assign(inst.env, {
        SIGIL_PUBLIC_URL: publicUrl,
        SIGIL_OAUTH_ALLOW_LOOPBACK: "true",
        SIGIL_OAUTH_PROVIDERS_FILE: providersFile,
        SIGIL_OAUTH_TIMEOUT_MS: String(TIMEOUT_MS),
      });
      init = await sigilInit(inst);
      server = await startServer(inst, [], { port });
      parent = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
      // The published client-secret encryption key, as a deployment's backend reads it.
      const keys = (await (await fetch(`${server.url}/public/v1/discovery/keys`)).json()) as {
        keys: { purpose: string; publicKey: string; status?: string }[];
      };
      const secretKey = keys.keys.find((k) => k.purpose === "OAUTH2_CLIENT_SECRET" && (k.status === undefined || k.status === "active"));
      assert.ok(secretKey, `an OAUTH2_CLIENT_SECRET key in ${JSON.stringify(keys)}`);
      for (const c of oidc.clients.values()) {
        if (c.clientId.startsWith("rp-")) continue;
        secrets.add(c.clientSecret);
        const encryptedClientSecret = await encryptOauth2ClientSecret(c.clientSecret, secretKey.publicKey);
        const provider =
          c.clientId === "sigil-discord"
            ? "OAUTH2_PROVIDER_DISCORD"
            : c.clientId === "sigil-oidc"
              ? "OAUTH2_PROVIDER_OIDC"
              : "OAUTH2_PROVIDER_X";
        const r = await parent.createOauth2Credential({ provider, clientId: c.clientId, encryptedClientSecret });
        creds.set(c.clientId, r.oauth2CredentialId);
      }
    });
    after(async () => {
      await server?.stop();
      await oidc?.stop();
      await rogue?.stop();
      await inst?.cleanup();
    });

    const asSession = (key: P256KeyPair, organizationId: string) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: organizationId,
      }).apiClient();
    /** undefined when `key` stamps getWhoami in `organizationId`, else the error message. */
    const whoamiError = async (key: P256KeyPair, organizationId: string) => {
      try {
        await asSession(key, organizationId).getWhoami({ organizationId });
        return undefined;
      } catch (err) {
        return String((err as Error).message);
      }
    };
    const completed = async (organizationId: string): Promise<number> =>
      (await parent.getActivities({ organizationId, filterByStatus: ["ACTIVITY_STATUS_COMPLETED"], paginationOptions: { limit: "100" } }))
        .activities.length;

    /** The PKCE code flow at the provider as `accountId`, then oauth2_authenticate through the SDK. */
    const oauth2Params = async (clientId: string, accountId: string, sessionKey: P256KeyPair, target?: { publicUncompressed: string }) => {
      const a = await oidc.authorize({ clientId, accountId });
      return {
        organizationId: init.organizationId,
        oauth2CredentialId: creds.get(clientId)!,
        authCode: a.code,
        redirectUri: a.redirectUri,
        codeVerifier: a.codeVerifier,
        nonce: nonceOf(sessionKey.publicKey),
        ...(target ? { bearerTokenTargetPublicKey: target.publicUncompressed } : {}),
      };
    };
    const sigilToken = async (
      clientId: string,
      accountId: string,
      sessionKey: P256KeyPair,
      target?: { publicUncompressed: string },
    ): Promise<string> =>
      (await parent.oauth2Authenticate(await oauth2Params(clientId, accountId, sessionKey, target))).oidcToken as string;

    const subOrgParams = (name: string, providerName: string, oidcToken: string) => ({
      organizationId: init.organizationId,
      subOrganizationName: `${name} ${randomBytes(3).toString("hex")}`,
      rootQuorumThreshold: 1,
      rootUsers: [{ userName: name, apiKeys: [], authenticators: [], oauthProviders: [{ providerName, oidcToken }] }],
    });
    /** Sign-up: a sub-organization whose root user logs in with `oidcToken`'s identity. */
    const signUp = async (name: string, providerName: string, oidcToken: string): Promise<{ subId: string; userId: string }> => {
      const r = await parent.createSubOrganization(subOrgParams(name, providerName, oidcToken));
      return { subId: r.subOrganizationId, userId: r.rootUserIds[0] };
    };

    /** What core's loginWithOauth sends: stamp_login for `key`, stamped by it, attested by the OIDC token. */
    const attestedStampLogin = async (
      oidcToken: string,
      key: P256KeyPair,
      organizationId: string,
      timestampMs: string,
    ): Promise<Answer> => {
      const body = JSON.stringify({
        parameters: { publicKey: key.publicKey, expirationSeconds: "900", invalidateExisting: false },
        organizationId,
        timestampMs,
        type: "ACTIVITY_TYPE_STAMP_LOGIN",
      });
      const signature = await new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey }).sign(
        body,
        SignatureFormat.Der,
      );
      const stamp = { publicKeyAttestation: oidcToken, scheme: "STAMP_ATTESTED_SCHEME_P256_OIDC", publicKey: key.publicKey, signature };
      const res = await fetch(`${server.url}/public/v1/submit/stamp_login`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", "X-Stamp-Attested": Buffer.from(JSON.stringify(stamp)).toString("base64url") },
      });
      const text = await res.text();
      return { status: res.status, text, json: JSON.parse(text) };
    };

    it("PKCE code flow → oauth2_authenticate → the token verifies with jose on the discovery jwks_uri → oauth_login (parent key, sub-org) → the session stamps; the bearer token decrypts", async () => {
      const sessionKey = generateP256KeyPair();
      const target = generateP256();
      const token = await sigilToken("sigil-x", acct("alice"), sessionKey, target);

      const discovery = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as {
        issuer: string;
        jwks_uri: string;
        id_token_signing_alg_values_supported?: string[];
      };
      assert.equal(discovery.issuer, publicUrl);
      assert.ok(discovery.jwks_uri.startsWith(`${publicUrl}/`), discovery.jwks_uri);
      const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
      const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: publicUrl, audience: "sigil-x" });
      assert.equal(protectedHeader.alg, "ES256");
      assert.equal(typeof protectedHeader.kid, "string");
      assert.equal(payload.sub, `x:${acct("alice")}`);
      assert.equal(payload.nonce, nonceOf(sessionKey.publicKey));
      assert.ok(typeof payload.exp === "number" && payload.exp > Date.now() / 1000, JSON.stringify(payload));

      // The provider's bearer token, HPKE-encrypted to our target key: it is the access token
      // oidc-provider issued to Sigil, and it works at the provider.
      assert.equal(typeof payload.encrypted_bearer_token, "string", JSON.stringify(payload));
      const bearer = Buffer.from(
        decryptCredentialBundle(payload.encrypted_bearer_token as string, privateScalar(target).toString("hex")),
        "hex",
      ).toString("utf8");
      assert.ok(oidc.accessTokens.includes(bearer), "the decrypted bearer token is one the provider issued");
      const me = await fetch(`${oidc.issuer}/2/users/me`, { headers: { authorization: `Bearer ${bearer}` } });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { data: { id: string } }).data.id, acct("alice"));
      secrets.add(bearer);

      const { subId, userId } = await signUp("alice", "X", token);
      const login = await parent.oauthLogin({ organizationId: subId, oidcToken: token, publicKey: sessionKey.publicKey });
      assert.equal(typeof login.session, "string");
      const claims = decodeJwt(login.session as string);
      assert.equal(claims.user_id, userId);
      const who = await asSession(sessionKey, subId).getWhoami({ organizationId: subId });
      assert.equal(who.userId, userId);
      assert.equal(who.organizationId, subId);
    });

    it("the generic OIDC provider (its standard userinfo endpoint) through oauth2_authenticate: sub is oidc:<sub>", async () => {
      const sessionKey = generateP256KeyPair();
      const token = await sigilToken("sigil-oidc", acct("judy"), sessionKey);
      const { payload } = await jwtVerify(
        token,
        createRemoteJWKSet(new URL((await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()).jwks_uri)),
        { issuer: publicUrl, audience: "sigil-oidc" },
      );
      assert.equal(payload.sub, `oidc:${acct("judy")}`);
      assert.equal(payload.nonce, nonceOf(sessionKey.publicKey));
      assert.equal(payload.encrypted_bearer_token, undefined, "no bearer token without a target key");
    });

    it("sign-up of a sub-organization with an OAuth root user → list_suborgs OIDC_TOKEN finds it → oauth_login works", async () => {
      const sessionKey = generateP256KeyPair();
      const token = await sigilToken("sigil-discord", acct("bob"), sessionKey);
      assert.equal(decodeJwt(token).sub, `discord:${acct("bob")}`);
      const { subId, userId } = await signUp("bob", "Discord", token);
      const found = await parent.getSubOrgIds({ organizationId: init.organizationId, filterType: "OIDC_TOKEN", filterValue: token });
      assert.deepEqual(found.organizationIds, [subId]);
      const providers = await parent.getOauthProviders({ organizationId: subId, userId });
      assert.equal(providers.oauthProviders.length, 1);
      assert.equal(providers.oauthProviders[0].issuer, publicUrl);
      assert.equal(providers.oauthProviders[0].audience, "sigil-discord");
      assert.equal(providers.oauthProviders[0].subject, `discord:${acct("bob")}`);
      await parent.oauthLogin({ organizationId: found.organizationIds[0], oidcToken: token, publicKey: sessionKey.publicKey });
      assert.equal(await whoamiError(sessionKey, subId), undefined);
    });

    it("core's path: stamp_login with X-Stamp-Attested STAMP_ATTESTED_SCHEME_P256_OIDC in the parent's id works twice with one token; a wrong key is refused", async (t) => {
      const sessionKey = generateP256KeyPair();
      const token = await sigilToken("sigil-x", acct("carol"), sessionKey);
      const { subId, userId } = await signUp("carol", "X", token);
      for (const ts of [String(Date.now()), String(Date.now() + 1)]) {
        const res = await attestedStampLogin(token, sessionKey, init.organizationId, ts);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.activity.organizationId, subId);
        assert.equal(decodeJwt(res.json.activity.result.stampLoginResult.session as string).user_id, userId);
      }
      assert.equal(await whoamiError(sessionKey, subId), undefined);
      // Another key presenting the same token: its nonce commits to sessionKey, not this one.
      const intruder = generateP256KeyPair();
      const before = await completed(subId);
      const res = await attestedStampLogin(token, intruder, init.organizationId, String(Date.now()));
      assertClientError(res, /nonce/i, t);
      assert.match(String(await whoamiError(intruder, subId)), /could not find public key/);
      assert.equal(await completed(subId), before, "nothing executed");
    });

    it("trusted issuer: oidc-provider's own id_token signs up and logs in through oauth_login (its JWKS fetched by Sigil)", async () => {
      const sessionKey = generateP256KeyPair();
      const idToken = await oidc.idToken("rp-a", acct("dave"), nonceOf(sessionKey.publicKey));
      const { subId, userId } = await signUp("dave", "OIDC", idToken);
      assert.ok(oidc.count("/jwks") >= 1, "Sigil fetched the trusted issuer's JWKS");
      const providers = await parent.getOauthProviders({ organizationId: subId, userId });
      assert.deepEqual(
        providers.oauthProviders.map((p: { issuer: string; audience: string; subject: string }) => [p.issuer, p.audience, p.subject]),
        [[oidc.issuer, "rp-a", acct("dave")]],
      );
      const login = await parent.oauthLogin({ organizationId: subId, oidcToken: idToken, publicKey: sessionKey.publicKey });
      assert.equal(decodeJwt(login.session as string).user_id, userId);
      assert.equal(await whoamiError(sessionKey, subId), undefined);
    });

    it("abuse: a wrong nonce (Sigil-issued X token presented for another key) is refused; no session", async (t) => {
      const sessionKey = generateP256KeyPair();
      const token = await sigilToken("sigil-x", acct("gina"), sessionKey);
      const { subId } = await signUp("gina", "X", token);
      const other = generateP256KeyPair();
      const before = await completed(subId);
      const res = await send(await parent.stampOauthLogin({ organizationId: subId, oidcToken: token, publicKey: other.publicKey }));
      assertClientError(res, /nonce/i, t);
      assert.match(String(await whoamiError(other, subId)), /could not find public key/);
      assert.equal(await completed(subId), before, "nothing executed");
    });

    it("abuse: an expired token (minted already expired by the OIDC server) is refused at login and at sign-up", async (t) => {
      const sessionKey = generateP256KeyPair();
      const rp = oidc.clients.get("rp-expiring")!;
      const fresh = await oidc.idToken("rp-expiring", acct("hank"), nonceOf(sessionKey.publicKey));
      const { subId } = await signUp("hank", "OIDC", fresh);
      // Past any clock-skew leeway: expired two hours ago when minted.
      rp.idTokenTtl = -7200;
      const expired = await oidc.idToken("rp-expiring", acct("hank"), nonceOf(sessionKey.publicKey));
      rp.idTokenTtl = undefined;
      assert.ok((decodeJwt(expired).exp ?? Infinity) < Date.now() / 1000 - 3600);
      const before = await completed(subId);
      const login = await send(
        await parent.stampOauthLogin({ organizationId: subId, oidcToken: expired, publicKey: sessionKey.publicKey }),
      );
      assertClientError(login, /expired/i, t);
      assert.match(String(await whoamiError(sessionKey, subId)), /could not find public key/);
      assert.equal(await completed(subId), before, "nothing executed");
      // Sign-up with an expired token of a person not registered yet.
      rp.idTokenTtl = -7200;
      const expiredNewcomer = await oidc.idToken("rp-expiring", acct("judy"), nonceOf(generateP256KeyPair().publicKey));
      rp.idTokenTtl = undefined;
      const parentBefore = await completed(init.organizationId);
      const again = await send(await parent.stampCreateSubOrganization(subOrgParams("judy", "OIDC", expiredNewcomer)));
      assertClientError(again, /expired/i, t);
      assert.equal(await completed(init.organizationId), parentBefore, "no sub-organization created");
    });

    it("abuse: a token from an issuer that is not trusted is refused, and that issuer is never contacted", async (t) => {
      const sessionKey = generateP256KeyPair();
      const token = await rogue.idToken("rp-u", acct("dave"), nonceOf(sessionKey.publicKey));
      const mark = rogue.mark();
      const parentBefore = await completed(init.organizationId);
      const login = await send(
        await parent.stampOauthLogin({ organizationId: init.organizationId, oidcToken: token, publicKey: sessionKey.publicKey }),
      );
      assertClientError(login, /issuer|trusted/i, t);
      const signup = await send(await parent.stampCreateSubOrganization(subOrgParams("rogue", "OIDC", token)));
      assertClientError(signup, /issuer|trusted/i, t);
      const lookup = await send(
        await parent.stampGetSubOrgIds({ organizationId: init.organizationId, filterType: "OIDC_TOKEN", filterValue: token }),
      );
      assertClientError(lookup, /issuer|trusted/i, t);
      assert.equal(rogue.count(undefined, mark), 0, `the untrusted issuer saw ${JSON.stringify(rogue.requests.slice(mark))}`);
      assert.equal(await completed(init.organizationId), parentBefore, "nothing executed");
      assert.match(String(await whoamiError(sessionKey, init.organizationId)), /could not find public key/);
    });

    it("abuse: audience mismatch — the same person's token for another client does not log in as the registered identity", async (t) => {
      const sessionKey = generateP256KeyPair();
      const registered = await oidc.idToken("rp-a", acct("frank"), nonceOf(sessionKey.publicKey));
      const { subId } = await signUp("frank", "OIDC", registered);
      const otherAudience = await oidc.idToken("rp-b", acct("frank"), nonceOf(sessionKey.publicKey));
      assert.equal(decodeJwt(otherAudience).sub, decodeJwt(registered).sub);
      const before = await completed(subId);
      const res = await send(
        await parent.stampOauthLogin({ organizationId: subId, oidcToken: otherAudience, publicKey: sessionKey.publicKey }),
      );
      assertClientError(res, undefined, t);
      assert.match(String(await whoamiError(sessionKey, subId)), /could not find public key/);
      assert.equal(await completed(subId), before, "nothing executed");
    });

    it("abuse: a replayed authorization code and a PKCE mismatch are refused with the provider's error", async (t) => {
      const sessionKey = generateP256KeyPair();
      const params = await oauth2Params("sigil-x", acct("ivan"), sessionKey);
      const first = await parent.oauth2Authenticate(params);
      assert.equal(typeof first.oidcToken, "string");
      const before = await completed(init.organizationId);
      const replay = await send(await parent.stampOauth2Authenticate({ ...params, timestampMs: String(Date.now() + 5) }));
      assertClientError(replay, /invalid_grant/, t);
      const pkce = await oauth2Params("sigil-x", acct("ivan"), sessionKey);
      const mismatch = await send(await parent.stampOauth2Authenticate({ ...pkce, codeVerifier: randomBytes(32).toString("base64url") }));
      assertClientError(mismatch, /invalid_grant/, t);
      assert.equal(await completed(init.organizationId), before, "nothing executed");
    });

    it("abuse: a provider answering 500 or garbage (token endpoint or user-info) is a clear activity failure", async (t) => {
      const sessionKey = generateP256KeyPair();
      const before = await completed(init.organizationId);
      for (const clientId of ["fault-token-500", "fault-token-garbage", "fault-userinfo-500", "fault-userinfo-garbage"]) {
        const res = await send(await parent.stampOauth2Authenticate(await oauth2Params(clientId, acct("zed"), sessionKey)));
        assertClientError(res, undefined, t);
        assert.ok(!res.text.includes(oidc.clients.get(clientId)!.clientSecret), `${clientId}: no secret in the answer`);
        assert.ok(!res.text.includes("definitely not JSON"), `${clientId}: the provider's body is not echoed: ${res.text}`);
      }
      assert.equal(await completed(init.organizationId), before, "nothing executed");
    });

    it("abuse: a provider that hangs is answered within the timeout (+ slack) while other requests are served", async (t) => {
      const sessionKey = generateP256KeyPair();
      const params = await oauth2Params("fault-userinfo-hang", acct("zed"), sessionKey);
      const mark = oidc.mark();
      const started = Date.now();
      const pending = send(await parent.stampOauth2Authenticate(params));
      // Wait (bounded) until Sigil is stuck on the provider's user-info call.
      const deadline = Date.now() + 5000;
      while (oidc.count("/2/users/me", mark) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(oidc.count("/2/users/me", mark), 1, "Sigil called the hanging user-info endpoint");
      const whoStarted = Date.now();
      const who = await parent.getWhoami({ organizationId: init.organizationId });
      const whoMs = Date.now() - whoStarted;
      assert.equal(who.organizationId, init.organizationId);
      assert.ok(whoMs < 1000, `getWhoami took ${whoMs} ms while a provider hung`);
      const res = await pending;
      const elapsed = Date.now() - started;
      assertClientError(res, /time|did not answer/i, t);
      assert.ok(elapsed < TIMEOUT_MS + 3000, `answered after ${elapsed} ms (timeout ${TIMEOUT_MS} ms)`);
      t.diagnostic(
        `getWhoami answered in ${whoMs} ms while the provider hung; the hung call answered after ${elapsed} ms (timeout ${TIMEOUT_MS} ms)`,
      );
    });

    it("abuse: a second attach of the same identity → OAUTH_PROVIDER_ALREADY_EXISTS, nothing created", async (t) => {
      const sessionKey = generateP256KeyPair();
      const token = await sigilToken("sigil-discord", acct("erin"), sessionKey);
      const { subId } = await signUp("erin", "Discord", token);
      const parentBefore = await completed(init.organizationId);
      const again = await send(await parent.stampCreateSubOrganization(subOrgParams("erin again", "Discord", token)));
      assertClientError(again, undefined, t);
      assert.equal(again.status, 409, again.text);
      assert.match(again.text, /OAUTH_PROVIDER_ALREADY_EXISTS/);
      const attach = await send(
        await parent.stampCreateOauthProviders({
          organizationId: init.organizationId,
          userId: init.userId,
          oauthProviders: [{ providerName: "Discord", oidcToken: token }],
        }),
      );
      assertClientError(attach, undefined, t);
      assert.equal(attach.status, 409, attach.text);
      assert.match(attach.text, /OAUTH_PROVIDER_ALREADY_EXISTS/);
      assert.equal(await completed(init.organizationId), parentBefore, "nothing executed");
      const found = await parent.getSubOrgIds({ organizationId: init.organizationId, filterType: "OIDC_TOKEN", filterValue: token });
      assert.deepEqual(found.organizationIds, [subId]);
    });

    it("secrets: no client secret and no bearer token in the database files or the server's output", async () => {
      for (const t of oidc.accessTokens) secrets.add(t);
      assert.ok(oidc.accessTokens.length >= 5, `the provider issued access tokens to Sigil (${oidc.accessTokens.length})`);
      assert.ok(secrets.size >= oidc.accessTokens.length + 7);
      let stored: string;
      if (spec.name === "sqlite") {
        // Every file of the database (main file, WAL, shared memory), as bytes read as text.
        const files = readdirSync(inst.dataDir).filter((f) => f.startsWith("sigil.db"));
        assert.ok(files.includes("sigil.db"), JSON.stringify(files));
        stored = files.map((f) => readFileSync(path.join(inst.dataDir, f)).toString("latin1")).join("\n");
        assert.ok(stored.includes("oauth2_credentials"), "the dump covers the OAuth tables");
      } else {
        const c = new pg.Client({ connectionString: inst.env.DATABASE_URL });
        await c.connect();
        try {
          const tables = (
            await c.query<{ schemaname: string; tablename: string }>(
              "SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
            )
          ).rows;
          assert.ok(
            tables.some((t) => t.tablename === "oauth2_credentials"),
            JSON.stringify(tables),
          );
          const dumps: string[] = [];
          for (const t of tables) {
            const rows = await c.query<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM "${t.schemaname}"."${t.tablename}" x`);
            dumps.push(`${t.tablename}: ${rows.rows.map((r) => r.j).join("\n")}`);
          }
          stored = dumps.join("\n");
        } finally {
          await c.end();
        }
      }
      // The dump is real: the credentials' client ids are in it.
      assert.ok(stored.includes("fault-userinfo-hang") && stored.includes("sigil-discord"), "the dump holds the credentials");
      const logs = server.output();
      assert.ok(logs.includes("/public/v1/submit/oauth2_authenticate"), "the server's log covers the flow");
      for (const s of secrets) {
        const forms = [s, Buffer.from(s).toString("hex"), Buffer.from(s).toString("base64"), Buffer.from(s).toString("base64url")];
        for (const f of forms) {
          assert.ok(!stored.includes(f), `a secret (${s.slice(0, 6)}…) is in the ${spec.name} database`);
          assert.ok(!logs.includes(f), `a secret (${s.slice(0, 6)}…) is in the server's output`);
        }
      }
    });
  });
}
