// OAuth pieces without a server: the client-secret envelope @turnkey/crypto builds opens here;
// the encrypted bearer token opens with @turnkey/crypto's decryptCredentialBundle; the OIDC
// tokens verify with jose against the JWKS; the provider file and destination rules refuse
// what they must; each provider's user-info answer maps to its provider-scoped subject.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { decryptCredentialBundle, encryptOauth2ClientSecret, generateP256KeyPair } from "@turnkey/crypto";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { generateP256 } from "../../src/crypto/p256.ts";
import type { ServiceKey } from "../../src/auth/service-keys.ts";
import { openClientSecret } from "../../src/logins/oauth/client-secret.ts";
import { encryptBearerToken, uncompressedP256 } from "../../src/logins/oauth/bearer-token.ts";
import { mintOidcToken, openidConfiguration, OIDC_TOKEN_LIFETIME_SECONDS, p256Jwk } from "../../src/logins/oauth/oidc-issuer.ts";
import { OAUTH_PROVIDERS } from "../../src/logins/oauth/providers.ts";
import { parseProvidersFile, oauthSettingsFrom } from "../../src/logins/oauth/configure.ts";
import { STRICT_WEBHOOK_URLS, urlProblem } from "../../src/webhooks/url-policy.ts";
import { DEFAULTS, loadConfig } from "../../src/config.ts";
import { exchangeCode, fetchUserInfo, ProviderError } from "../../src/logins/oauth/provider-client.ts";
import { newVerifier, startOAuthProvider } from "../helpers/oauth-provider.ts";

const oidcKey = (id = "svk_test"): ServiceKey => ({ id, purpose: "OIDC_TOKEN", signer: generateP256() });

describe("client secret envelope (encryptOauth2ClientSecret)", () => {
  it("what the SDK encrypts to our key opens to the secret, including non-ASCII and long secrets", async () => {
    const receiver = generateP256();
    for (const secret of ["s3cr3t", "ünïcødé-secret-✓", "x".repeat(2000)]) {
      const envelope = await encryptOauth2ClientSecret(secret, receiver.publicUncompressed);
      assert.match(envelope, /^[0-9a-f]+$/);
      assert.deepEqual(openClientSecret(receiver, envelope), { secret });
    }
  });

  it("another key, a flipped byte, a truncated or lengthened envelope, non-hex: a problem, never a secret", async () => {
    const receiver = generateP256();
    const envelope = await encryptOauth2ClientSecret("s3cr3t", receiver.publicUncompressed);
    const problem = (r: ReturnType<typeof openClientSecret>) => ("problem" in r ? r.problem : `opened: ${r.secret}`);
    assert.match(problem(openClientSecret(generateP256(), envelope)), /could not be decrypted/);
    const flip = (i: number) => envelope.slice(0, i) + (envelope[i] === "0" ? "1" : "0") + envelope.slice(i + 1);
    assert.match(problem(openClientSecret(receiver, flip(envelope.length - 3))), /could not be decrypted/); // tag
    assert.match(problem(openClientSecret(receiver, flip(5))), /could not be decrypted/); // nonce
    assert.match(problem(openClientSecret(receiver, envelope.slice(0, -2))), /length field/);
    assert.match(problem(openClientSecret(receiver, `${envelope}00`)), /length field/);
    assert.match(problem(openClientSecret(receiver, "zz")), /hex envelope/);
    assert.match(problem(openClientSecret(receiver, "00".repeat(40))), /too short/);
    // The sender key replaced by bytes that are no point.
    const badPoint = envelope.slice(0, 24) + "04" + "ff".repeat(64) + envelope.slice(24 + 130);
    assert.match(problem(openClientSecret(receiver, badPoint)), /not a P-256 point|could not be decrypted/);
  });
});

describe("encrypted_bearer_token", () => {
  it("decryptCredentialBundle opens it with the target's private key (uncompressed and compressed targets)", async () => {
    const target = generateP256KeyPair();
    const token = "provider-bearer-token.äö.123";
    for (const pub of [target.publicKeyUncompressed, target.publicKey]) {
      const bundle = await encryptBearerToken(token, pub);
      const hex = decryptCredentialBundle(bundle, target.privateKey);
      assert.equal(Buffer.from(hex, "hex").toString("utf8"), token);
    }
    // Encrypted to someone else: the target's key does not open it.
    const other = await encryptBearerToken(token, generateP256KeyPair().publicKeyUncompressed);
    assert.throws(() => decryptCredentialBundle(other, target.privateKey));
  });

  it("refuses a target that is not a P-256 point", async () => {
    assert.equal(uncompressedP256("04" + "ff".repeat(64)), undefined);
    assert.equal(uncompressedP256("nothex"), undefined);
    await assert.rejects(encryptBearerToken("t", "02" + "ff".repeat(32)), /not a P-256 public key/);
  });
});

describe("OIDC tokens and the issuer documents", () => {
  it("a minted token verifies with jose against the JWKS: header, iss, aud, sub, nonce, exp = iat + 3600", async () => {
    const key = oidcKey();
    const iat = Math.floor(Date.now() / 1000);
    const token = await mintOidcToken(key, {
      issuer: "https://sigil.example.com",
      audience: "client-123",
      identity: { sub: "x:42", name: "Ada", email: "ada@example.com", email_verified: true },
      nonce: "ab".repeat(32),
      encryptedBearerToken: "bundle",
      iat,
    });
    assert.deepEqual(decodeProtectedHeader(token), { alg: "ES256", typ: "JWT", kid: key.id });
    const jwks = createLocalJWKSet({ keys: [p256Jwk(key.id, key.signer.publicUncompressed)] });
    const { payload } = await jwtVerify(token, jwks, {
      issuer: "https://sigil.example.com",
      audience: "client-123",
      algorithms: ["ES256"],
    });
    assert.deepEqual(payload, {
      iss: "https://sigil.example.com",
      aud: "client-123",
      sub: "x:42",
      nonce: "ab".repeat(32),
      iat,
      exp: iat + OIDC_TOKEN_LIFETIME_SECONDS,
      name: "Ada",
      email: "ada@example.com",
      email_verified: true,
      encrypted_bearer_token: "bundle",
    });
    // The same kid with another key's public half: the signature does not verify.
    const impostor = createLocalJWKSet({ keys: [p256Jwk(key.id, generateP256().publicUncompressed)] });
    await assert.rejects(jwtVerify(token, impostor), /signature verification failed/);
  });

  it("the JWK and the discovery document have what OIDC libraries read", () => {
    const key = oidcKey("svk_a");
    const jwk = p256Jwk(key.id, key.signer.publicUncompressed);
    assert.deepEqual(Object.keys(jwk).sort(), ["alg", "crv", "kid", "kty", "use", "x", "y"]);
    assert.equal(jwk.use, "sig");
    const doc = openidConfiguration("https://sigil.example.com/base/");
    assert.equal(doc.issuer, "https://sigil.example.com/base");
    assert.equal(doc.jwks_uri, "https://sigil.example.com/base/.well-known/jwks.json");
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ["ES256"]);
    assert.ok(doc.response_types_supported.length > 0 && doc.subject_types_supported.length > 0);
  });
});

describe("OAuth configuration", () => {
  it("SIGIL_PUBLIC_URL defaults to http://localhost:<port>, drops a trailing slash, refuses credentials or a query", () => {
    assert.equal(oauthSettingsFrom({ ...DEFAULTS, port: 9123 }).publicUrl, "http://localhost:9123");
    const cfg = loadConfig({
      SIGIL_PUBLIC_URL: "https://id.example.com/",
      SIGIL_OAUTH_TIMEOUT_MS: "2500",
      SIGIL_OAUTH_ALLOW_LOOPBACK: "true",
    });
    assert.equal(cfg.publicUrl, "https://id.example.com");
    const s = oauthSettingsFrom(cfg);
    assert.equal(s.publicUrl, "https://id.example.com");
    assert.equal(s.timeoutMs, 2500);
    assert.equal(s.allowLoopback, true);
    assert.equal(s.providers.get("OAUTH2_PROVIDER_X")?.userInfoUrl, "https://api.x.com/2/users/me");
    assert.equal(s.providers.has("OAUTH2_PROVIDER_OIDC"), false);
    assert.throws(() => loadConfig({ SIGIL_PUBLIC_URL: "https://u:p@id.example.com" }), /credentials/);
    assert.throws(() => loadConfig({ SIGIL_PUBLIC_URL: "ftp://id.example.com" }), /http/);
    assert.throws(() => loadConfig({ SIGIL_OAUTH_TIMEOUT_MS: "5" }), /SIGIL_OAUTH_TIMEOUT_MS/);
    assert.throws(() => loadConfig({ SIGIL_OAUTH_ALLOW_LOOPBACK: "yes" }), /true or false/);
    assert.equal(loadConfig({}).oauthTimeoutMs, 10_000);
  });

  it("the providers file: known providers and https public URLs only (loopback in development), trusted issuers", () => {
    const file = (doc: unknown) => JSON.stringify(doc);
    const ok = parseProvidersFile(
      file({
        providers: {
          OAUTH2_PROVIDER_X: { tokenUrl: "https://x.test.example/token", userInfoUrl: "https://x.test.example/me" },
          OAUTH2_PROVIDER_OIDC: { tokenUrl: "https://idp.example.com/token" },
        },
        issuers: [{ issuer: "https://accounts.google.com", jwksUrl: "https://www.googleapis.com/oauth2/v3/certs" }],
      }),
      false,
    );
    assert.equal(ok.providers.get("OAUTH2_PROVIDER_X")?.tokenUrl, "https://x.test.example/token");
    assert.equal(ok.providers.get("OAUTH2_PROVIDER_OIDC")?.userInfoUrl, "");
    assert.deepEqual(ok.issuers, [{ issuer: "https://accounts.google.com", jwksUrl: "https://www.googleapis.com/oauth2/v3/certs" }]);
    assert.throws(() => parseProvidersFile("{", false), /not JSON/);
    assert.throws(
      () => parseProvidersFile(file({ providers: { OAUTH2_PROVIDER_FOO: { tokenUrl: "https://a.example.com" } } }), false),
      /unknown provider "OAUTH2_PROVIDER_FOO"/,
    );
    assert.throws(
      () => parseProvidersFile(file({ providers: { OAUTH2_PROVIDER_X: { tokenUrl: "https://a.example.com/t" } } }), false),
      /userInfoUrl must be a string/,
    );
    assert.throws(
      () =>
        parseProvidersFile(
          file({ providers: { OAUTH2_PROVIDER_X: { tokenUrl: "http://127.0.0.1:9/t", userInfoUrl: "http://127.0.0.1:9/u" } } }),
          false,
        ),
      /loopback.*SIGIL_OAUTH_ALLOW_LOOPBACK/,
    );
    assert.throws(
      () =>
        parseProvidersFile(
          file({ providers: { OAUTH2_PROVIDER_X: { tokenUrl: "https://10.1.2.3/t", userInfoUrl: "https://a.example.com/u" } } }),
          true,
        ),
      /private/,
    );
    assert.throws(() => parseProvidersFile(file({ providers: {}, extra: 1 }), false), /unknown key "extra"/);
    assert.throws(
      () =>
        parseProvidersFile(
          file({
            issuers: [
              { issuer: "a", jwksUrl: "https://a.example.com/j" },
              { issuer: "a", jwksUrl: "https://a.example.com/j" },
            ],
          }),
          false,
        ),
      /listed twice/,
    );
    const dev = parseProvidersFile(
      file({ providers: { OAUTH2_PROVIDER_X: { tokenUrl: "http://127.0.0.1:9/t", userInfoUrl: "http://localhost:9/u" } } }),
      true,
    );
    assert.equal(dev.providers.get("OAUTH2_PROVIDER_X")?.tokenUrl, "http://127.0.0.1:9/t");
  });

  it("the destination policy takes the OAuth loopback setting independently of the webhooks' one", () => {
    assert.match(urlProblem("http://127.0.0.1:1/t", { allowLoopback: false, what: "OAuth provider" }) ?? "accepted", /loopback/);
    assert.equal(urlProblem("http://127.0.0.1:1/t", { allowLoopback: true, what: "OAuth provider" }), undefined);
    assert.match(urlProblem("http://idp.example.com/t", { allowLoopback: true, what: "OAuth provider" }) ?? "accepted", /https/);
    // The webhooks' default (loopback off) is unchanged.
    assert.match(urlProblem("http://127.0.0.1:1/t", STRICT_WEBHOOK_URLS) ?? "accepted", /loopback/);
  });
});

describe("providers map user-info to provider-scoped subjects", () => {
  const identity = (name: string, info: Record<string, unknown>) => OAUTH_PROVIDERS.get(name)!.identity(info);
  it("X, Discord, Google, Apple and generic OIDC", () => {
    assert.deepEqual(identity("OAUTH2_PROVIDER_X", { data: { id: "1234567890123456789", name: "Ada", username: "ada" } }), {
      sub: "x:1234567890123456789",
      name: "Ada",
    });
    assert.deepEqual(
      identity("OAUTH2_PROVIDER_DISCORD", { id: "80351110224678912", username: "nelly", email: "n@example.com", verified: true }),
      {
        sub: "discord:80351110224678912",
        email: "n@example.com",
        email_verified: true,
        name: "nelly",
      },
    );
    assert.deepEqual(identity("OAUTH2_PROVIDER_GOOGLE", { sub: "1099", email: "g@example.com", email_verified: "true" }), {
      sub: "google:1099",
      email: "g@example.com",
      email_verified: true,
    });
    assert.deepEqual(identity("OAUTH2_PROVIDER_APPLE", { sub: "000123.abc.456" }), { sub: "apple:000123.abc.456" });
    assert.deepEqual(identity("OAUTH2_PROVIDER_OIDC", { sub: "u-1", name: "N" }), { sub: "oidc:u-1", name: "N" });
  });
  it("an answer without a usable id is a reason, not an identity", () => {
    assert.match(String(identity("OAUTH2_PROVIDER_X", { id: "1" })), /data/);
    assert.match(String(identity("OAUTH2_PROVIDER_X", { data: { id: 12 } })), /data\.id/);
    assert.match(String(identity("OAUTH2_PROVIDER_DISCORD", { id: "a b" })), /"id"/);
    assert.match(String(identity("OAUTH2_PROVIDER_OIDC", {})), /"sub"/);
  });
});

describe("provider client (against the loopback fixture)", () => {
  const x = OAUTH_PROVIDERS.get("OAUTH2_PROVIDER_X")!;
  const redirectUri = "https://app.example.com/cb";

  it("refuses a loopback provider unless the development setting allows it; then exchanges and fetches user-info", async () => {
    const p = await startOAuthProvider();
    try {
      const verifier = newVerifier();
      const input = {
        clientId: p.clientId,
        clientSecret: p.clientSecret,
        code: p.issueCode({ id: "9" }, verifier, redirectUri),
        codeVerifier: verifier,
        redirectUri,
      };
      await assert.rejects(exchangeCode(x, p.endpoints("x"), input, { timeoutMs: 1000, allowLoopback: false }), (err: Error) => {
        assert.ok(err instanceof ProviderError);
        assert.match(err.message, /refusing to connect to 127\.0\.0\.1: .*loopback/);
        return true;
      });
      assert.equal(p.hits.token, 0, "nothing was sent");
      // A name that resolves to loopback is refused at the dial as well.
      await assert.rejects(
        exchangeCode(x, { ...p.endpoints("x"), tokenUrl: p.endpoints("x").tokenUrl.replace("127.0.0.1", "idp.example.com") }, input, {
          timeoutMs: 1000,
          allowLoopback: false,
          resolve: async () => [{ address: "127.0.0.1", family: 4 }],
        }),
        /loopback/,
      );
      const exchanged = await exchangeCode(x, p.endpoints("x"), input, { timeoutMs: 1000, allowLoopback: true });
      assert.equal(exchanged.accessToken, p.accessTokens.at(-1));
      const info = await fetchUserInfo(p.endpoints("x"), exchanged, { timeoutMs: 1000, allowLoopback: true });
      assert.deepEqual(x.identity(info), { sub: "x:9", name: "user" }); // the fixture sends an empty name and username "user"
    } finally {
      await p.close();
    }
  });

  it("Apple: client_secret_post, and the identity from the token answer's id_token (no user-info endpoint)", async () => {
    const apple = OAUTH_PROVIDERS.get("OAUTH2_PROVIDER_APPLE")!;
    assert.equal(apple.clientAuth, "post");
    const p = await startOAuthProvider();
    try {
      const endpoints = { tokenUrl: p.endpoints("oidc").tokenUrl, userInfoUrl: "" };
      const verifier = newVerifier();
      const input = {
        clientId: p.clientId,
        clientSecret: p.clientSecret,
        code: p.issueCode({ id: "001.apple", email: "a@example.com", emailVerified: true }, verifier, redirectUri),
        codeVerifier: verifier,
        redirectUri,
      };
      const opts = { timeoutMs: 1000, allowLoopback: true };
      const exchanged = await exchangeCode(apple, endpoints, input, opts);
      assert.deepEqual(apple.identity(await fetchUserInfo(endpoints, exchanged, opts)), {
        sub: "apple:001.apple",
        email: "a@example.com",
        email_verified: true,
      });
      assert.equal(p.hits.userInfo, 0);
      // A wrong secret is refused by the provider: the message quotes its error code only.
      const again = { ...input, clientSecret: "wrong", code: p.issueCode({ id: "x" }, verifier, redirectUri) };
      await assert.rejects(exchangeCode(apple, endpoints, again, opts), /HTTP 401, error "invalid_client"/);
    } finally {
      await p.close();
    }
  });

  it("without a user-info endpoint the identity is the token answer's id_token claims (Apple); none at all is an error", async () => {
    const claims = { sub: "000123.abc", email: "a@privaterelay.appleid.com", email_verified: "true" };
    const idToken = `e30.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`;
    const info = await fetchUserInfo(
      { tokenUrl: "https://unused.example.com", userInfoUrl: "" },
      { accessToken: "a", idTokenClaims: claims },
      { timeoutMs: 100, allowLoopback: false },
    );
    assert.deepEqual(OAUTH_PROVIDERS.get("OAUTH2_PROVIDER_APPLE")!.identity(info), {
      sub: "apple:000123.abc",
      email: "a@privaterelay.appleid.com",
      email_verified: true,
    });
    assert.ok(idToken.split(".").length === 3);
    await assert.rejects(
      fetchUserInfo(
        { tokenUrl: "https://unused.example.com", userInfoUrl: "" },
        { accessToken: "a" },
        { timeoutMs: 100, allowLoopback: false },
      ),
      /without an id_token/,
    );
  });
});
