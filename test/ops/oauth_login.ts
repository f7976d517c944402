// oauth_login (docs/oauth.md §4.1) and the attested OIDC stamp (docs/oauth.md §4.2, core's loginWithOauth): an
// OIDC token — Sigil-issued (signed by the store's OIDC_TOKEN key) or a trusted issuer's (a
// JWKS served on loopback) — whose nonce commits to the session key logs in the user holding
// its identity, in the target organization or below it.
import { after, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyStamper, SignatureFormat } from "@turnkey/api-key-stamper";
import { completed, failsWith, notFound, perEngine, type Creds, type Harness, type Json, type Res } from "../helpers/inproc.ts";
import { loginsTrusting, nonceOf, sigilToken, startIssuer, type FakeIssuer } from "../helpers/oidc-tokens.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { generateP256, privateScalar, type P256Private } from "../../src/crypto/p256.ts";
import { newId } from "../../src/store/util.ts";
import { oauthLogin } from "../../src/activities/oauth/oauth_login.ts";
import { stampLogin } from "../../src/activities/sessions/stamp_login.ts";

const TYPE = "ACTIVITY_TYPE_OAUTH_LOGIN";
const issuers: FakeIssuer[] = [];
let issuer: FakeIssuer;
after(async () => {
  for (const i of issuers) await i.close();
});

function claimsOf(session: string): Json {
  return JSON.parse(atob(session.split(".")[1]!)) as Json;
}

/** A sub-organization of the root whose root user signs in with `token`'s identity. */
async function oauthSubOrg(h: Harness, token: string, name = "oauth"): Promise<{ orgId: string; userId: string }> {
  const res = await h.submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
    subOrganizationName: `${name}-${newId().slice(0, 8)}`,
    rootQuorumThreshold: 1,
    rootUsers: [{ userName: name, apiKeys: [], authenticators: [], oauthProviders: [{ providerName: "google", oidcToken: token }] }],
  });
  const r = completed(res, "createSubOrganizationResultV8");
  return { orgId: r.subOrganizationId, userId: r.rootUserIds[0] };
}

const loginKeys = async (h: Harness, userId: string) =>
  (
    await h.service.store.db
      .selectFrom("api_keys")
      .select("id")
      .where("user_id", "=", userId)
      .where("credential_type", "=", "CREDENTIAL_TYPE_LOGIN")
      .execute()
  ).length;

function login(h: Harness, params: Json, organizationId = h.root.organizationId): Promise<Res> {
  return h.submit("oauth_login", TYPE, { expirationSeconds: "900", ...params }, { organizationId });
}

/** What core's loginWithOauth sends: stamp_login stamped X-Stamp-Attested with the OIDC token. */
async function attestedLogin(
  h: Harness,
  token: string,
  key: P256Private,
  organizationId: string,
  publicKey = key.publicCompressed,
): Promise<Res> {
  const body = JSON.stringify({
    parameters: { publicKey, expirationSeconds: "900", invalidateExisting: false },
    organizationId,
    timestampMs: String(Date.now()),
    generateAppProofs: false,
    type: "ACTIVITY_TYPE_STAMP_LOGIN",
  });
  const stamper = new ApiKeyStamper({ apiPublicKey: key.publicCompressed, apiPrivateKey: privateScalar(key).toString("hex") });
  const signature = await stamper.sign(body, SignatureFormat.Der);
  const stamp = { publicKeyAttestation: token, scheme: "STAMP_ATTESTED_SCHEME_P256_OIDC", publicKey: key.publicCompressed, signature };
  return h.post("/public/v1/submit/stamp_login", body, {
    "X-Stamp-Attested": Buffer.from(JSON.stringify(stamp)).toString("base64url"),
    "X-Client-Version": "@turnkey/core@2.8.1",
  });
}

perEngine(
  "oauth_login",
  (h) => {
    it("a Sigil-issued token logs in its sub-organization user through the official SDK; the session key works", async () => {
      const sub = `x:${newId()}`;
      const user = await oauthSubOrg(h(), await sigilToken(h(), { sub, aud: "x-client" }));
      const key: P256KeyPair = generateP256KeyPair();
      const token = await sigilToken(h(), { sub, aud: "x-client", nonce: nonceOf(key.publicKey) });
      const sdk = await h().sdk();
      const { session } = await sdk.oauthLogin({
        organizationId: user.orgId,
        oidcToken: token,
        publicKey: key.publicKey,
        expirationSeconds: "900",
      });
      const claims = claimsOf(session);
      assert.equal(claims.user_id, user.userId);
      assert.equal(claims.organization_id, user.orgId);
      assert.equal(claims.public_key, key.publicKey);
      const creds: Creds = { organizationId: user.orgId, userId: user.userId, key };
      const who = await h().query("whoami", {}, { as: creds });
      assert.equal(who.status, 200, JSON.stringify(who.json));
      assert.equal(who.json.userId, user.userId);
      // The same token logs in again (valid until exp), e.g. with the parent's id as target.
      const again = completed(await login(h(), { oidcToken: token, publicKey: key.publicKey }), oauthLogin);
      assert.equal(claimsOf(again.session).user_id, user.userId);
    });

    it("a trusted issuer's token (JWKS on loopback), parent org as target, tknonce accepted; invalidateExisting", async () => {
      const sub = `g-${newId()}`;
      const user = await oauthSubOrg(h(), await issuer.sign({ sub, aud: "web-client" }), "google");
      const k1 = generateP256KeyPair();
      const r1 = completed(
        await login(h(), {
          oidcToken: await issuer.sign({ sub, aud: "web-client", tknonce: nonceOf(k1.publicKey) }),
          publicKey: k1.publicKey,
        }),
        oauthLogin,
      );
      assert.equal(claimsOf(r1.session).organization_id, user.orgId);
      const k2 = generateP256KeyPair();
      completed(
        await login(h(), {
          oidcToken: await issuer.sign({ sub, aud: "web-client", nonce: nonceOf(k2.publicKey) }),
          publicKey: k2.publicKey,
        }),
        oauthLogin,
      );
      assert.equal(await loginKeys(h(), user.userId), 2);
      const k3 = generateP256KeyPair();
      const res = await login(h(), {
        oidcToken: await issuer.sign({ sub, aud: "web-client", nonce: nonceOf(k3.publicKey) }),
        publicKey: k3.publicKey,
        invalidateExisting: true,
      });
      completed(res, oauthLogin);
      assert.equal(await loginKeys(h(), user.userId), 1);
      assert.equal(res.json.activity.intent.oauthLoginIntent.publicKey, k3.publicKey);
    });

    it("abuse: wrong or missing nonce, expired, untrusted issuer, bad signature — 400 INVALID_OIDC_TOKEN, nothing executed", async () => {
      const sub = `x:${newId()}`;
      const user = await oauthSubOrg(h(), await sigilToken(h(), { sub }));
      const key = generateP256KeyPair();
      const other = generateP256KeyPair();
      const untrusted = await startIssuer("https://evil.example");
      issuers.push(untrusted);
      const cases: [string, string, RegExp][] = [
        ["wrong nonce", await sigilToken(h(), { sub, nonce: nonceOf(other.publicKey) }), /nonce mismatch/],
        ["no nonce", await sigilToken(h(), { sub }), /no nonce/],
        ["expired", await sigilToken(h(), { sub, nonce: nonceOf(key.publicKey), ttl: -600 }), /expired/],
        ["untrusted issuer", await untrusted.sign({ sub, nonce: nonceOf(key.publicKey) }), /not trusted/],
        ["bad signature", await issuer.sign({ sub, nonce: nonceOf(key.publicKey) }, { key: "stranger" }), /signature verification failed/],
        ["garbage", "not.a.token", /malformed/],
      ];
      for (const [what, token, message] of cases) {
        const res = await login(h(), { oidcToken: token, publicKey: key.publicKey }, user.orgId);
        failsWith(res, 400, 3, "INVALID_OIDC_TOKEN", message, ["parameters.oidcToken"]);
        assert.ok(!("activity" in res.json), `${what}: no activity`);
      }
      assert.equal(untrusted.requests, 0, "the untrusted issuer was never fetched");
      assert.equal(await loginKeys(h(), user.userId), 0);
      const recorded = await h()
        .service.store.db.selectFrom("activities")
        .select("id")
        .where("type", "=", TYPE)
        .where("organization_id", "=", user.orgId)
        .execute();
      assert.equal(recorded.length, 0);
    });

    it("abuse: audience mismatch and another organization's user are not found (404)", async () => {
      const sub = `x:${newId()}`;
      const user = await oauthSubOrg(h(), await sigilToken(h(), { sub, aud: "app-a" }));
      const key = generateP256KeyPair();
      notFound(
        await login(h(), {
          oidcToken: await sigilToken(h(), { sub, aud: "app-b", nonce: nonceOf(key.publicKey) }),
          publicKey: key.publicKey,
        }),
        /no user with this OAuth identity/,
      );
      // The right token, but targeted at another root organization: its user is not there.
      const otherOrg = await h().newOrg("other-oauth");
      const res = await h().submit(
        "oauth_login",
        TYPE,
        { oidcToken: await sigilToken(h(), { sub, aud: "app-a", nonce: nonceOf(key.publicKey) }), publicKey: key.publicKey },
        { as: otherOrg },
      );
      notFound(res, /no user with this OAuth identity/);
      assert.equal(await loginKeys(h(), user.userId), 0);
    });

    it("attested OIDC stamp (core's loginWithOauth): parent org as target, the token logs in again and again; wrong key refused", async () => {
      const sub = `x:${newId()}`;
      const user = await oauthSubOrg(h(), await sigilToken(h(), { sub }));
      const key = generateP256();
      const token = await sigilToken(h(), { sub, nonce: nonceOf(key.publicCompressed) });
      for (let i = 0; i < 2; i++) {
        const r = completed(await attestedLogin(h(), token, key, h().root.organizationId), stampLogin);
        const claims = claimsOf(r.session);
        assert.equal(claims.user_id, user.userId);
        assert.equal(claims.organization_id, user.orgId);
      }
      assert.equal(await loginKeys(h(), user.userId), 1, "the same key re-registered, not duplicated");
      // The sub-organization's own id works too; a trusted issuer's token as well.
      completed(await attestedLogin(h(), token, key, user.orgId), stampLogin);
      // A key the nonce does not commit to.
      const other = generateP256();
      failsWith(await attestedLogin(h(), token, other, user.orgId), 401, 16, "INVALID_OIDC_TOKEN", /nonce mismatch/);
      // An identity nobody holds.
      const stranger = await sigilToken(h(), { sub: `x:${newId()}`, nonce: nonceOf(key.publicCompressed) });
      failsWith(
        await attestedLogin(h(), stranger, key, h().root.organizationId),
        401,
        16,
        "CREDENTIAL_NOT_FOUND",
        /no user with this OAuth identity/,
      );
      // Expired.
      const expired = await sigilToken(h(), { sub, nonce: nonceOf(key.publicCompressed), ttl: -600 });
      failsWith(await attestedLogin(h(), expired, key, h().root.organizationId), 401, 16, "INVALID_OIDC_TOKEN", /expired/);
    });
  },
  undefined,
  async () => {
    issuer = await startIssuer("https://accounts.trusted.example");
    issuers.push(issuer);
    return { logins: loginsTrusting([issuer]) };
  },
);
