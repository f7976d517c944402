import { after, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { decryptCredentialBundle, generateP256KeyPair } from "@turnkey/crypto";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from "jose";
import {
  addUsersWithKeys,
  completed,
  failsWith,
  invalidRequest,
  notFound,
  perEngine,
  precondition,
  type Harness,
  type Json,
} from "../helpers/inproc.ts";
import { rotateServiceKeys } from "../../src/auth/service-keys.ts";
import {
  loginsFor,
  newCredential,
  newVerifier,
  startOAuthProvider,
  TEST_ISSUER,
  type FakeUser,
  type OAuthProviderFixture,
} from "../helpers/oauth-provider.ts";
import { oauth2Authenticate } from "../../src/activities/oauth2/oauth2_authenticate.ts";
import { updateRootQuorum } from "../../src/activities/organizations/update_root_quorum.ts";
import { createPolicyV3 } from "../../src/activities/policies/create_policy.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";

const OP = "oauth2_authenticate";
const TYPE = "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE";
const REDIRECT = "https://app.example.com/oauth/callback";

// One provider per harness (per engine; engines run one after the other), all closed at the end.
const providers: OAuthProviderFixture[] = [];
const fixture = () => providers.at(-1)!;
after(() => Promise.all(providers.map((p) => p.close())));

/** docs/oauth.md §4.3: sha256 hex of the public key's hex text. */
const nonceOf = (publicKeyHex: string) => createHash("sha256").update(publicKeyHex, "utf8").digest("hex");

async function issuerKeys(h: Harness): Promise<{ discovery: Json; jwks: JSONWebKeySet }> {
  const d = await h.app.inject({ method: "GET", url: "/.well-known/openid-configuration" });
  assert.equal(d.statusCode, 200, d.body);
  const discovery = JSON.parse(d.body) as Json;
  const jwksPath = new URL(discovery.jwks_uri as string).pathname;
  const j = await h.app.inject({ method: "GET", url: jwksPath });
  assert.equal(j.statusCode, 200, j.body);
  return { discovery, jwks: JSON.parse(j.body) as JSONWebKeySet };
}

perEngine(
  "oauth2_authenticate",
  (h) => {
    let credential: { x: string; discord: string; oidc: string } | undefined;
    const cred = async () => {
      if (!credential) {
        const p = fixture();
        const make = async (provider: string) =>
          (await newCredential(h(), { provider, clientId: p.clientId, clientSecret: p.clientSecret })).oauth2CredentialId;
        credential = {
          x: await make("OAUTH2_PROVIDER_X"),
          discord: await make("OAUTH2_PROVIDER_DISCORD"),
          oidc: await make("OAUTH2_PROVIDER_OIDC"),
        };
      }
      return credential;
    };
    const params = async (user: FakeUser, over: Json = {}, which: "x" | "discord" | "oidc" = "x"): Promise<Json> => {
      const codeVerifier = newVerifier();
      return {
        oauth2CredentialId: (await cred())[which],
        authCode: fixture().issueCode(user, codeVerifier, REDIRECT),
        redirectUri: REDIRECT,
        codeVerifier,
        nonce: nonceOf(generateP256KeyPair().publicKey),
        ...over,
      };
    };
    const recorded = async () =>
      (await h().service.store.db.selectFrom("activities").select("id").where("type", "=", TYPE).execute()).length;
    const reset = () => Object.assign(fixture().mode, { token: "ok", userInfo: "ok" });

    it("X: code + PKCE → an ES256 token from Sigil that verifies with jose against the published JWKS (iss, aud, sub, nonce, exp)", async () => {
      const p = await params({ id: "1234567890123456789", name: "Ada" });
      const before = Math.floor(Date.now() / 1000);
      const sdk = await h().sdk();
      const { oidcToken } = await sdk.oauth2Authenticate(p as Parameters<typeof sdk.oauth2Authenticate>[0]);
      const { discovery, jwks } = await issuerKeys(h());
      assert.equal(discovery.issuer, TEST_ISSUER);
      assert.equal(discovery.jwks_uri, `${TEST_ISSUER}/.well-known/jwks.json`);
      assert.deepEqual(discovery.id_token_signing_alg_values_supported, ["ES256"]);
      const header = decodeProtectedHeader(oidcToken);
      assert.equal(header.alg, "ES256");
      assert.equal(header.typ, "JWT");
      assert.ok(
        jwks.keys.some((k) => k.kid === header.kid),
        "the token's kid is in the JWKS",
      );
      const { payload } = await jwtVerify(oidcToken, createLocalJWKSet(jwks), {
        issuer: discovery.issuer as string,
        audience: fixture().clientId,
        algorithms: ["ES256"],
      });
      assert.equal(payload.sub, "x:1234567890123456789");
      assert.equal(payload.nonce, p.nonce);
      assert.equal(payload.name, "Ada");
      assert.equal(payload.encrypted_bearer_token, undefined);
      assert.ok(payload.iat! >= before - 1 && payload.iat! <= before + 5);
      assert.equal(payload.exp, payload.iat! + 3600);
      // The kid is the active OIDC_TOKEN service key, listed in discovery/keys too.
      const keys = JSON.parse((await h().app.inject({ method: "GET", url: "/public/v1/discovery/keys" })).body).keys as Json[];
      assert.ok(keys.some((k) => k.purpose === "OIDC_TOKEN" && k.keyId === header.kid));
    });

    it("bearerTokenTargetPublicKey: encrypted_bearer_token decrypts with @turnkey/crypto to the provider's bearer token", async () => {
      const target = generateP256KeyPair();
      const res = await h().submit(OP, TYPE, await params({ id: "77" }, { bearerTokenTargetPublicKey: target.publicKeyUncompressed }));
      const { oidcToken } = completed(res, oauth2Authenticate);
      const claims = JSON.parse(Buffer.from(String(oidcToken).split(".")[1]!, "base64url").toString("utf8")) as Json;
      const hex = decryptCredentialBundle(claims.encrypted_bearer_token as string, target.privateKey);
      assert.equal(Buffer.from(hex, "hex").toString("utf8"), fixture().accessTokens.at(-1));
      // The bearer token itself is nowhere in the answer or the record.
      assert.ok(!JSON.stringify(res.json).includes(fixture().accessTokens.at(-1)!));
    });

    it("Discord and generic OIDC user-info shapes: discord:<id> and oidc:<sub>, with email claims", async () => {
      const d = completed(
        await h().submit(
          OP,
          TYPE,
          await params({ id: "80351110224678912", name: "nelly", email: "n@example.com", emailVerified: true }, {}, "discord"),
        ),
        oauth2Authenticate,
      );
      const o = completed(
        await h().submit(OP, TYPE, await params({ id: "user-42", email: "o@example.com", emailVerified: false }, {}, "oidc")),
        oauth2Authenticate,
      );
      const { jwks } = await issuerKeys(h());
      const dc = (await jwtVerify(d.oidcToken as string, createLocalJWKSet(jwks), { issuer: TEST_ISSUER, audience: fixture().clientId }))
        .payload;
      assert.equal(dc.sub, "discord:80351110224678912");
      assert.equal(dc.email, "n@example.com");
      assert.equal(dc.email_verified, true);
      const oc = (await jwtVerify(o.oidcToken as string, createLocalJWKSet(jwks), { issuer: TEST_ISSUER, audience: fixture().clientId }))
        .payload;
      assert.equal(oc.sub, "oidc:user-42");
      assert.equal(oc.email_verified, false);
    });

    it("keys rotate: after a rotation new tokens carry the new kid, and tokens signed before still verify with the JWKS", async () => {
      const before = completed(await h().submit(OP, TYPE, await params({ id: "5" })), oauth2Authenticate).oidcToken as string;
      await rotateServiceKeys(h().service.store.db, h().service.masterKey, ["OIDC_TOKEN"]);
      const afterRotation = completed(await h().submit(OP, TYPE, await params({ id: "5" })), oauth2Authenticate).oidcToken as string;
      assert.notEqual(decodeProtectedHeader(before).kid, decodeProtectedHeader(afterRotation).kid);
      const { jwks } = await issuerKeys(h());
      for (const token of [before, afterRotation]) {
        const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: TEST_ISSUER, audience: fixture().clientId });
        assert.equal(payload.sub, "x:5");
      }
    });

    it("a replayed auth code is a clear 400 quoting the provider's error code; nothing recorded", async () => {
      const p = await params({ id: "1" });
      completed(await h().submit(OP, TYPE, p), oauth2Authenticate);
      const n = await recorded();
      // A new body (nonce) with the same code: the provider refuses it.
      precondition(
        await h().submit(OP, TYPE, { ...p, nonce: "f".repeat(64) }),
        /token endpoint refused the request \(HTTP 400, error "invalid_grant"\)/,
      );
      assert.equal(await recorded(), n);
    });

    it("the identical body sent again is answered with the first activity, without a second code exchange", async () => {
      const p = await params({ id: "9" });
      const timestampMs = String(Date.now());
      const first = completed(await h().submit(OP, TYPE, p, { timestampMs }), oauth2Authenticate);
      const n = await recorded();
      const again = completed(await h().submit(OP, TYPE, p, { timestampMs }), oauth2Authenticate);
      assert.equal(again.oidcToken, first.oidcToken);
      assert.equal(await recorded(), n);
    });

    it("needing approvals, it never exchanges the code at a later vote: that vote records it FAILED with the reason", async () => {
      const first = await h().newOrg("oauth2 quorum");
      const [second] = await addUsersWithKeys(h(), 1, first);
      const p = fixture();
      const { oauth2CredentialId } = await newCredential(h(), {
        provider: "OAUTH2_PROVIDER_X",
        clientId: p.clientId,
        clientSecret: p.clientSecret,
        as: first,
      });
      completed(
        await h().submit(
          "update_root_quorum",
          "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM",
          { threshold: 2, userIds: [first.userId, second!.userId] },
          { as: first },
        ),
        updateRootQuorum,
      );
      const hits = p.hits.token;
      const pending = await h().submit(OP, TYPE, await params({ id: "3" }, { oauth2CredentialId }), { as: first });
      assert.equal(pending.status, 200, JSON.stringify(pending.json));
      assert.equal(pending.json.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");
      const voted = await h().submit(
        "approve_activity",
        "ACTIVITY_TYPE_APPROVE_ACTIVITY",
        { fingerprint: pending.json.activity.fingerprint },
        { as: second! },
      );
      assert.equal(voted.status, 200, JSON.stringify(voted.json));
      assert.equal(voted.json.activity.status, "ACTIVITY_STATUS_FAILED");
      assert.match(JSON.stringify(voted.json.activity.failure), /can only run when its submission is allowed/);
      assert.equal(p.hits.token, hits, "no code exchange at submission (consensus needed) nor at the vote");
    });

    it("PKCE mismatch and redirect_uri mismatch: 400 invalid_grant, nothing recorded", async () => {
      const n = await recorded();
      precondition(await h().submit(OP, TYPE, await params({ id: "1" }, { codeVerifier: newVerifier() })), /invalid_grant/);
      precondition(await h().submit(OP, TYPE, await params({ id: "1" }, { redirectUri: "https://evil.example.com/cb" })), /invalid_grant/);
      assert.equal(await recorded(), n);
    });

    it("provider 500, garbage, redirect, oversized answer: a clear 400 each, never the provider's body, nothing recorded", async () => {
      const n = await recorded();
      try {
        fixture().mode.token = "500";
        const r500 = precondition(await h().submit(OP, TYPE, await params({ id: "1" })), /HTTP 500, error "server_error"/);
        assert.ok(!String(r500.message).includes("internal details"));
        fixture().mode.token = "garbage";
        precondition(
          await h().submit(OP, TYPE, await params({ id: "1" })),
          /token endpoint answered with something that is not a JSON object/,
        );
        fixture().mode.token = "redirect";
        precondition(await h().submit(OP, TYPE, await params({ id: "1" })), /redirect \(HTTP 302\), which is not followed/);
        fixture().mode.token = "huge";
        precondition(await h().submit(OP, TYPE, await params({ id: "1" })), /more than 65536 bytes/);
        reset();
        fixture().mode.userInfo = "garbage";
        precondition(
          await h().submit(OP, TYPE, await params({ id: "1" })),
          /user-info endpoint answered with something that is not a JSON object/,
        );
        fixture().mode.userInfo = "500";
        precondition(await h().submit(OP, TYPE, await params({ id: "1" })), /user-info endpoint refused the request \(HTTP 500/);
      } finally {
        reset();
      }
      assert.equal(await recorded(), n);
    });

    it("a hanging provider: 400 after the timeout, and other requests are served meanwhile", async () => {
      const n = await recorded();
      fixture().mode.token = "hang";
      try {
        const started = Date.now();
        let hungDoneAt = 0;
        const hung = h()
          .submit(OP, TYPE, await params({ id: "1" }))
          .then((r) => ((hungDoneAt = Date.now()), r));
        // While the provider hangs, an activity of the same organization completes.
        const other = await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: `t-${Date.now()}`, userIds: [] });
        const otherDoneAt = Date.now();
        completed(other, createUserTag);
        precondition(await hung, /did not answer within 500 ms/);
        assert.ok(hungDoneAt - started >= 450, `gave up after ${hungDoneAt - started} ms`);
        assert.ok(otherDoneAt < hungDoneAt, "the other activity did not wait for the provider");
      } finally {
        reset();
      }
      assert.equal(await recorded(), n);
    });

    it("a credential that does not exist, or belongs to another organization: 404 OAUTH2_CREDENTIAL_NOT_FOUND, provider not called", async () => {
      const calls = fixture().hits.token;
      notFound(
        await h().submit(OP, TYPE, await params({ id: "1" }, { oauth2CredentialId: "00000000-0000-4000-8000-000000000000" })),
        /OAUTH2_CREDENTIAL_NOT_FOUND/,
      );
      notFound(await h().submit(OP, TYPE, await params({ id: "1" }), { as: await h().newOrg() }), /OAUTH2_CREDENTIAL_NOT_FOUND/);
      assert.equal(fixture().hits.token, calls);
    });

    it("a provider without endpoints on this server (Google here) is a clear 400 naming the setting", async () => {
      const { oauth2CredentialId } = await newCredential(h(), { provider: "OAUTH2_PROVIDER_APPLE", clientId: "c", clientSecret: "s" });
      // Apple's built-in endpoint is not configured in these settings (only X, Discord, OIDC point at the fixture).
      precondition(
        await h().submit(OP, TYPE, await params({ id: "1" }, { oauth2CredentialId })),
        /OAUTH2_PROVIDER_APPLE has no endpoints.*SIGIL_OAUTH_PROVIDERS_FILE/,
      );
    });

    it("parameter errors name the field (docs/oauth.md §3.1 wording)", async () => {
      const p = await params({ id: "1" });
      const without = (k: string) => Object.fromEntries(Object.entries(p).filter(([key]) => key !== k));
      invalidRequest(await h().submit(OP, TYPE, without("authCode")), /must be set/, ["parameters.authCode"]);
      invalidRequest(await h().submit(OP, TYPE, without("codeVerifier")), /must be set/, ["parameters.codeVerifier"]);
      invalidRequest(await h().submit(OP, TYPE, without("redirectUri")), /must be set/, ["parameters.redirectUri"]);
      invalidRequest(await h().submit(OP, TYPE, without("oauth2CredentialId")), /must be set/, ["parameters.oauth2CredentialId"]);
      invalidRequest(await h().submit(OP, TYPE, without("nonce")), /must be set/, ["parameters.nonce"]);
      invalidRequest(await h().submit(OP, TYPE, { ...p, authCode: "" }), /auth_code must be set/, ["parameters.authCode"]);
      invalidRequest(await h().submit(OP, TYPE, { ...p, codeVerifier: "short" }), /code_verifier must be set/, ["parameters.codeVerifier"]);
      invalidRequest(await h().submit(OP, TYPE, { ...p, redirectUri: "not a url" }), /redirect_uri must be an absolute URL/, [
        "parameters.redirectUri",
      ]);
      invalidRequest(await h().submit(OP, TYPE, { ...p, bearerTokenTargetPublicKey: "04" + "ff".repeat(64) }), /not a point of P-256/, [
        "parameters.bearerTokenTargetPublicKey",
      ]);
      invalidRequest(
        await h().submit(OP, TYPE, { ...p, bearerTokenTargetPublicKey: "abc" }),
        /bearerTokenTargetPublicKey must be a P-256 public key/,
        ["parameters.bearerTokenTargetPublicKey"],
      );
    });

    it("no client secret or bearer token in the database", async () => {
      const tables = ["oauth2_credentials", "activities", "service_keys"] as const;
      const dump: string[] = [];
      for (const t of tables) dump.push(JSON.stringify(await h().service.store.db.selectFrom(t).selectAll().execute()));
      const text = dump.join("\n");
      assert.ok(fixture().accessTokens.length > 0);
      assert.ok(!text.includes(fixture().clientSecret), "client secret found in the database");
      for (const t of fixture().accessTokens) assert.ok(!text.includes(t), "a bearer token found in the database");
    });

    it("policy facts: resource AUTH, action CREATE, kind OAUTH2_AUTHENTICATE (an explicit deny stops it before the provider is called)", async () => {
      const org = await h().newOrg("deny-oauth2");
      const { oauth2CredentialId } = await newCredential(h(), {
        provider: "OAUTH2_PROVIDER_X",
        clientId: fixture().clientId,
        clientSecret: fixture().clientSecret,
        as: org,
      });
      const deny = await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        {
          policyName: "no oauth2",
          effect: "EFFECT_DENY",
          condition: "activity.resource == 'AUTH' && activity.action == 'CREATE' && activity.kind == 'OAUTH2_AUTHENTICATE'",
          consensus: "",
          notes: "",
        },
        { as: org },
      );
      completed(deny, createPolicyV3);
      // Root users are decided by the root quorum alone; a non-root user meets the policy.
      const [user] = await addUsersWithKeys(h(), 1, org);
      const calls = fixture().hits.token;
      const res = await h().submit(OP, TYPE, await params({ id: "1" }, { oauth2CredentialId }), { as: user! });
      failsWith(res, 403, 7, "REQUEST_NOT_AUTHORIZED");
      assert.equal(fixture().hits.token, calls, "the provider was not called for a denied activity");
    });
  },
  undefined,
  async () => {
    const provider = await startOAuthProvider();
    providers.push(provider);
    return { logins: loginsFor(provider, 500) };
  },
);
