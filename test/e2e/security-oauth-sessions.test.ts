// Security fixes of the sec-oauth branch, end to end on both engines (docs/oauth-identities.md,
// docs/sessions-and-network.md): a child-process Sigil trusting a real OIDC server on loopback
// (test/helpers/oidc-server.ts), driven with the official SDK clients (@turnkey/sdk-server,
// @turnkey/http with @turnkey/api-key-stamper); a TCP relay whose outgoing side is bound to
// 127.0.0.2 stands for a second client address. Every sub-organization user is an attacker.
// The rate-limit fixes are unit tests: test/unit/network-rate-limit-bounds.test.ts.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { writeFileSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { Turnkey, type TurnkeyApiClient } from "@turnkey/sdk-server";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { decodeJwt } from "jose";
import { relayFrom } from "../helpers/relay.ts";
import {
  engines,
  freePort,
  newInstance,
  rejection,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { OidcServer, type Account } from "../helpers/oidc-server.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";

/** docs/oauth.md §4.3: the token's nonce is sha256 hex of the session public key's hex text. */
const nonceOf = (publicKeyHex: string) => createHash("sha256").update(publicKeyHex, "utf8").digest("hex");
const suffix = () => randomBytes(3).toString("hex");

const ACCOUNTS: Account[] = ["victim", "attacker", "owner"].map((id) => ({ id: `${id}-${suffix()}`, username: `${id}_handle`, name: id }));
const acct = (name: string) => ACCOUNTS.find((a) => a.id.startsWith(`${name}-`))!.id;

for (const spec of engines()) {
  describe(`security: OAuth identities, sessions, idempotency, keys [${spec.name}]`, { skip: spec.skip, timeout: 180_000 }, () => {
    let oidc: OidcServer;
    let inst: Instance;
    let server: RunningServer;
    let relay: Awaited<ReturnType<typeof relayFrom>>;
    let init: InitResult;
    let parentKey: P256KeyPair;
    let parent: TurnkeyApiClient;

    const sdk = (baseUrl: string, key: P256KeyPair, organizationId: string): TurnkeyApiClient =>
      new Turnkey({
        apiBaseUrl: baseUrl,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: organizationId,
      }).apiClient();
    const http = (key: P256KeyPair): TurnkeyClient =>
      new TurnkeyClient({ baseUrl: server.url }, new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey }));

    /** A sub-organization (signed up by the parent's backend) whose root user holds an API key: an attacker's account. */
    const signUpWithKey = async (name: string): Promise<{ subId: string; userId: string; key: P256KeyPair; client: TurnkeyApiClient }> => {
      const key = generateP256KeyPair();
      const r = await parent.createSubOrganization({
        subOrganizationName: `${name} ${suffix()}`,
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: name,
            apiKeys: [{ apiKeyName: `${name} key`, publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
      });
      return { subId: r.subOrganizationId, userId: r.rootUserIds![0]!, key, client: sdk(server.url, key, r.subOrganizationId) };
    };

    before(async () => {
      oidc = await OidcServer.start(
        ["evil-app", "victim-app", "owner-web", "owner-ios"].map((clientId) => ({
          clientId,
          clientSecret: `cs-${randomBytes(24).toString("base64url")}`,
        })),
        ACCOUNTS,
      );
      const port = await freePort();
      inst = await newInstance(spec.name);
      const providersFile = path.join(inst.dataDir, "oauth-providers.json");
      writeFileSync(providersFile, JSON.stringify({ providers: {}, issuers: [{ issuer: oidc.issuer, jwksUrl: oidc.jwksUrl }] }));
      Object.assign(inst.env, {
        SIGIL_PUBLIC_URL: `http://127.0.0.1:${port}`,
        SIGIL_OAUTH_ALLOW_LOOPBACK: "true",
        SIGIL_OAUTH_PROVIDERS_FILE: providersFile,
      });
      init = await sigilInit(inst);
      parentKey = { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey };
      server = await startServer(inst, [], { port });
      relay = await relayFrom("127.0.0.2", server.port);
      parent = sdk(server.url, parentKey, init.organizationId);
    });
    after(async () => {
      await relay?.close();
      await server?.stop();
      await oidc?.stop();
      await inst?.cleanup();
    });

    it("oidcClaims for another audience: 403 from a sub-organization's user, nothing attached, the victim's sign-up and oauth_login stay theirs; accepted from the top-level backend", async () => {
      const attacker = await signUpWithKey("attacker");
      // The attacker runs "evil-app" at the same issuer; the victim once signed in there, so
      // the attacker holds a genuine token with the victim's subject — for evil-app.
      const evilToken = await oidc.idToken("evil-app", acct("victim"), nonceOf(generateP256KeyPair().publicKey));
      const err = await rejection(
        attacker.client.createOauthProviders({
          userId: attacker.userId,
          oauthProviders: [
            { providerName: "evil", oidcToken: evilToken },
            { providerName: "victim", oidcClaims: { iss: oidc.issuer, sub: acct("victim"), aud: "victim-app" } },
          ],
        }),
      );
      assert.equal(err.code, 7, err.message);
      assert.match(err.message, /oidcClaims: OIDC claims are accepted only from a top-level organization's credential/);
      // Nothing half-written: not even the token entry of the refused request.
      assert.deepEqual(
        (await attacker.client.getOauthProviders({ organizationId: attacker.subId, userId: attacker.userId })).oauthProviders,
        [],
      );
      // A token of its own audience is still the user's to attach.
      const attached = await attacker.client.createOauthProviders({
        userId: attacker.userId,
        oauthProviders: [{ providerName: "evil", oidcToken: evilToken }],
      });
      assert.equal(attached.providerIds.length, 1);

      // The victim signs up for victim-app (the parent's backend, a token of that audience) and logs in: their own account.
      const sessionKey = generateP256KeyPair();
      const victimToken = await oidc.idToken("victim-app", acct("victim"), nonceOf(sessionKey.publicKey));
      const victim = await parent.createSubOrganization({
        subOrganizationName: `victim ${suffix()}`,
        rootQuorumThreshold: 1,
        rootUsers: [
          { userName: "victim", apiKeys: [], authenticators: [], oauthProviders: [{ providerName: "victim-app", oidcToken: victimToken }] },
        ],
      });
      const login = await parent.oauthLogin({
        organizationId: init.organizationId,
        oidcToken: victimToken,
        publicKey: sessionKey.publicKey,
      });
      const claims = decodeJwt(login.session as string);
      assert.equal(claims.user_id, victim.rootUserIds![0]);
      assert.equal(claims.organization_id, victim.subOrganizationId);

      // The app's backend (a top-level organization's credential) still vouches with claims
      // for another audience; the identity is unique per (iss, sub, aud).
      const token = await oidc.idToken("owner-web", acct("owner"), nonceOf(generateP256KeyPair().publicKey));
      const r = await parent.createOauthProviders({
        userId: init.userId,
        oauthProviders: [
          { providerName: "web", oidcToken: token },
          { providerName: "ios", oidcClaims: { iss: oidc.issuer, sub: acct("owner"), aud: "owner-ios" } },
        ],
      });
      assert.equal(r.providerIds.length, 2);
      const again = await rejection(
        parent.createOauthProviders({
          userId: init.userId,
          oauthProviders: [
            { providerName: "web", oidcToken: token },
            { providerName: "ios2", oidcClaims: { iss: oidc.issuer, sub: acct("owner"), aud: "owner-ios" } },
          ],
        }),
      );
      assert.equal(again.code, 6, again.message);
      assert.match(again.message, /already attached/);
      const audiences = (await parent.getOauthProviders({ organizationId: init.organizationId, userId: init.userId })).oauthProviders
        .map((p) => p.audience)
        .sort();
      assert.deepEqual(audiences, ["owner-ios", "owner-web"]);
    });

    it("a byte-identical stamp_login body from a user of another sub-organization gets a fresh activity, never the first user's", async () => {
      const a = await signUpWithKey("twin-a");
      const b = await signUpWithKey("twin-b");
      const sessionKey = generateP256KeyPair();
      // What core sends: the parent's organization id (the key is found below it).
      const body = {
        type: "ACTIVITY_TYPE_STAMP_LOGIN" as const,
        timestampMs: String(Date.now()),
        organizationId: init.organizationId,
        parameters: { publicKey: sessionKey.publicKey, expirationSeconds: "900", invalidateExisting: false },
      };
      const first = await http(a.key).stampLogin(body);
      const signedA = await http(a.key).stampStampLogin(body);
      const signedB = await http(b.key).stampStampLogin(body);
      assert.equal(signedA.body, signedB.body, "the two users send the very same bytes");
      const second = await http(b.key).stampLogin(body);
      assert.notEqual(second.activity.id, first.activity.id, "B must not be answered with A's activity");
      assert.equal(second.activity.organizationId, b.subId);
      const sessionA = decodeJwt(first.activity.result.stampLoginResult!.session);
      const sessionB = decodeJwt(second.activity.result.stampLoginResult!.session);
      assert.equal(sessionA.user_id, a.userId);
      assert.equal(sessionB.user_id, b.userId);
      // Each one's replay is still idempotent, and answers that one's own activity.
      assert.equal((await http(a.key).stampLogin(body)).activity.id, first.activity.id);
      assert.equal((await http(b.key).stampLogin(body)).activity.id, second.activity.id);
      // Sent at the same moment: still one activity each, each answered with its own.
      const raceBody = {
        ...body,
        timestampMs: String(Date.now() + 1),
        parameters: { ...body.parameters, publicKey: generateP256KeyPair().publicKey },
      };
      const [ra, rb] = await Promise.all([http(a.key).stampLogin(raceBody), http(b.key).stampLogin(raceBody)]);
      assert.notEqual(ra.activity.id, rb.activity.id);
      assert.equal(decodeJwt(ra.activity.result.stampLoginResult!.session).user_id, a.userId);
      assert.equal(decodeJwt(rb.activity.result.stampLoginResult!.session).user_id, b.userId);
      // A's activity never lists B as anything.
      const listedA = (await a.client.getActivities({ organizationId: a.subId })).activities.filter(
        (x) => x.type === "ACTIVITY_TYPE_STAMP_LOGIN",
      );
      assert.deepEqual(listedA.map((x) => x.id).sort(), [first.activity.id, ra.activity.id].sort());
    });

    it("a sub-organization user cannot register the parent backend's public key (API key, user, sub-organization, session key): the parent's stamps stay the parent's", async () => {
      const attacker = await signUpWithKey("key-thief");
      const refused = async (p: Promise<unknown>, field: RegExp) => {
        const err = await rejection(p);
        assert.equal(err.code, 6, err.message);
        assert.match(err.message, /public key is a credential of a parent organization/);
        assert.match(err.message, field);
      };
      const stolen = { apiKeyName: "parent's", publicKey: parentKey.publicKey, curveType: "API_KEY_CURVE_P256" as const };
      await refused(attacker.client.createApiKeys({ userId: attacker.userId, apiKeys: [stolen] }), /parameters\.apiKeys\[0\]\.publicKey/);
      await refused(
        attacker.client.createUsers({
          users: [{ userName: "sock", apiKeys: [stolen], authenticators: [], oauthProviders: [], userTags: [] }],
        }),
        /parameters\.users\[0\]\.apiKeys\[0\]\.publicKey/,
      );
      await refused(
        attacker.client.createSubOrganization({
          subOrganizationName: `deeper ${suffix()}`,
          rootQuorumThreshold: 1,
          rootUsers: [{ userName: "sock", apiKeys: [stolen], authenticators: [], oauthProviders: [] }],
        }),
        /parameters\.rootUsers\[0\]\.apiKeys\[0\]\.publicKey/,
      );
      await refused(
        attacker.client.stampLogin({ publicKey: parentKey.publicKey, expirationSeconds: "900", invalidateExisting: false }),
        /parameters\.publicKey/,
      );
      // Nothing was written: the attacker's user still has its one key.
      const keys = (await attacker.client.getApiKeys({ organizationId: attacker.subId, userId: attacker.userId })).apiKeys;
      assert.deepEqual(
        keys.map((k) => k.credential.publicKey),
        [attacker.key.publicKey],
      );
      // The parent's stamp on the attacker's sub-organization is still the parent's user.
      const who = await parent.getWhoami({ organizationId: attacker.subId });
      assert.equal(who.userId, init.userId);
      // The parent itself may still put its own key on a sub-organization's root user (its choice).
      const own = await parent.createSubOrganization({
        subOrganizationName: `delegated ${suffix()}`,
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "delegate", apiKeys: [stolen], authenticators: [], oauthProviders: [] }],
      });
      assert.equal(own.rootUserIds!.length, 1);
    });

    it("a session created by a key with an IP allowlist is bound to it: refused from another address, like the key", async () => {
      const limitedKey = generateP256KeyPair();
      await parent.createApiKeys({
        userId: init.userId,
        apiKeys: [{ apiKeyName: "office only", publicKey: limitedKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
      });
      // The organization admits both loopback addresses; the key alone is limited to 127.0.0.1.
      await parent.setIpAllowlist({ enabled: true, rules: [{ cidr: "127.0.0.0/24", label: "loopback" }] });
      try {
        await parent.setIpAllowlist({ publicKey: limitedKey.publicKey, rules: [{ cidr: "127.0.0.1/32", label: "office" }] });
        const fromAfar = await rejection(sdk(relay.url, limitedKey, init.organizationId).getWhoami({}));
        assert.equal(fromAfar.code, 7, fromAfar.message);

        const sessionKey = generateP256KeyPair();
        const login = await sdk(server.url, limitedKey, init.organizationId).stampLogin({
          publicKey: sessionKey.publicKey,
          expirationSeconds: "900",
          invalidateExisting: false,
        });
        assert.equal(typeof login.session, "string");
        assert.equal((await sdk(server.url, sessionKey, init.organizationId).getWhoami({})).userId, init.userId);
        const sessionFromAfar = await rejection(sdk(relay.url, sessionKey, init.organizationId).getWhoami({}));
        assert.equal(sessionFromAfar.code, 7, sessionFromAfar.message);
        assert.match(sessionFromAfar.message, /IP address 127\.0\.0\.2 are not allowed/);
        // A session made by that session is bound to the same key's list.
        const nextKey = generateP256KeyPair();
        await sdk(server.url, sessionKey, init.organizationId).stampLogin({
          publicKey: nextKey.publicKey,
          expirationSeconds: "900",
          invalidateExisting: false,
        });
        assert.equal((await rejection(sdk(relay.url, nextKey, init.organizationId).getWhoami({}))).code, 7);
        // The binding follows the key's list: widened, the session is served from 127.0.0.2 too.
        await parent.setIpAllowlist({ publicKey: limitedKey.publicKey, rules: [{ cidr: "127.0.0.1/32" }, { cidr: "127.0.0.2/32" }] });
        assert.equal((await sdk(relay.url, sessionKey, init.organizationId).getWhoami({})).userId, init.userId);
        // The parent's key (organization rules) still makes unbound sessions.
        const plainKey = generateP256KeyPair();
        await parent.stampLogin({ publicKey: plainKey.publicKey, expirationSeconds: "900", invalidateExisting: false });
        assert.equal((await sdk(relay.url, plainKey, init.organizationId).getWhoami({})).userId, init.userId);
      } finally {
        await parent.removeIpAllowlist({ publicKey: limitedKey.publicKey });
        await parent.removeIpAllowlist({});
      }
    });
  });
}
