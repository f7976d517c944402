// @sigil/client (lib/client): what @turnkey/core's verifyOtp cannot do against a
// self-hosted service — encrypt the OTP code to init_otp's bundle, checked against the
// service's published key — and checks of session JWTs and verification tokens. The bundles
// and tokens are made by the service's own code; decryption and the reference checks are the
// official @turnkey/crypto functions.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { encryptOtpCodeToBundle, hpkeDecrypt, verifySessionJwtSignature } from "@turnkey/crypto";
import {
  AuthProxyRequestError,
  createSigilClient,
  verifyOtpWithProxy,
  encryptOtpCode,
  publicKeysFor,
  verifyOtpTargetBundle,
  verifySessionJwt,
  verifyVerificationToken,
  type ServiceKey,
} from "@sigil/client";
import { generateP256, privateScalar, signP256, type P256Private } from "../../src/crypto/p256.ts";
import { signSessionJwt, signVerificationToken } from "../../src/auth/tokens.ts";
import type { ServiceKey as ServerKey } from "../../src/auth/service-keys.ts";

/** init_otp's bundle as docs/logins.md §3.3 gives it: data = hex(JSON{targetPublic}), DER signature over SHA-256(data bytes). */
function targetBundle(signer: P256Private, target: P256Private, signerNamed = signer.publicUncompressed): string {
  const data = Buffer.from(JSON.stringify({ targetPublic: target.publicUncompressed }), "utf8");
  return JSON.stringify({
    enclaveQuorumPublic: signerNamed,
    dataSignature: signP256(signer, data, "der").toString("hex"),
    data: data.toString("hex"),
  });
}

const serverKey = (purpose: ServerKey["purpose"], signer: P256Private): ServerKey => ({ id: `svk_${purpose}`, purpose, signer });

/** Decrypts an encryptedOtpBundle with the SDK's hpkeDecrypt (AAD = enc ‖ pkR built in). */
function decrypt(bundle: string, target: P256Private): Record<string, unknown> {
  const { encappedPublic, ciphertext } = JSON.parse(bundle) as { encappedPublic: string; ciphertext: string };
  const plain = hpkeDecrypt({
    ciphertextBuf: Buffer.from(ciphertext, "hex"),
    encappedKeyBuf: Buffer.from(encappedPublic, "hex"),
    receiverPriv: privateScalar(target).toString("hex"),
  });
  return JSON.parse(Buffer.from(plain).toString("utf8")) as Record<string, unknown>;
}

describe("@sigil/client: OTP encryption", () => {
  const signer = generateP256();
  const target = generateP256();
  const client = generateP256();

  it("encrypts {otp_code, public_key} so that @turnkey/crypto's hpkeDecrypt opens it (AAD enc ‖ pkR)", async () => {
    const bundle = await encryptOtpCode({
      otpCode: "ABC123XYZ",
      otpEncryptionTargetBundle: targetBundle(signer, target),
      publicKey: client.publicCompressed,
      signerPublicKeys: [signer.publicUncompressed],
    });
    const outer = JSON.parse(bundle) as Record<string, string>;
    assert.deepEqual(Object.keys(outer), ["encappedPublic", "ciphertext"]);
    assert.match(outer.encappedPublic!, /^04[0-9a-f]{128}$/);
    // "otp_code" then "public_key", as the SDK emits them.
    assert.deepEqual(Object.entries(decrypt(bundle, target)), [
      ["otp_code", "ABC123XYZ"],
      ["public_key", client.publicCompressed],
    ]);
    // Fresh ephemeral key each time.
    const again = await encryptOtpCode({
      otpCode: "ABC123XYZ",
      otpEncryptionTargetBundle: targetBundle(signer, target),
      publicKey: client.publicCompressed,
      signerPublicKeys: [signer.publicUncompressed],
    });
    assert.notEqual(JSON.parse(again).encappedPublic, outer.encappedPublic);
  });

  it("does not decrypt with another target key, nor without the AAD rule's exact bytes", async () => {
    const bundle = await encryptOtpCode({
      otpCode: "1",
      otpEncryptionTargetBundle: targetBundle(signer, target),
      publicKey: client.publicCompressed,
      signerPublicKeys: [signer.publicUncompressed],
    });
    assert.throws(() => decrypt(bundle, generateP256()));
    const tampered = JSON.parse(bundle) as Record<string, string>;
    tampered.ciphertext = tampered.ciphertext!.slice(0, -2) + (tampered.ciphertext!.endsWith("00") ? "01" : "00");
    assert.throws(() => decrypt(JSON.stringify(tampered), target));
  });

  it("accepts exactly what @turnkey/crypto's encryptOtpCodeToBundle accepts with the same signer key", async () => {
    const b = targetBundle(signer, target);
    const sdk = await encryptOtpCodeToBundle("777", b, client.publicCompressed, signer.publicUncompressed);
    assert.equal(decrypt(sdk, target).otp_code, "777");
    assert.equal(verifyOtpTargetBundle(b, [signer.publicUncompressed]), target.publicUncompressed);
  });

  it("refuses a bundle signed by another key, one naming a key not published, and a forged signature", async () => {
    const other = generateP256();
    const published = [signer.publicUncompressed];
    const enc = (bundle: string) =>
      encryptOtpCode({ otpCode: "1", otpEncryptionTargetBundle: bundle, publicKey: client.publicCompressed, signerPublicKeys: published });
    // Signed and named by another key: not one of the service's keys.
    await assert.rejects(enc(targetBundle(other, target)), /not one of this service's OTP_ENCRYPTION_TARGET keys/);
    // Named as the service's key but signed by another: the signature fails.
    await assert.rejects(enc(targetBundle(other, target, signer.publicUncompressed)), /signature verification failed/);
    // The SDK agrees on both.
    await assert.rejects(encryptOtpCodeToBundle("1", targetBundle(other, target), client.publicCompressed, signer.publicUncompressed));
    await assert.rejects(
      encryptOtpCodeToBundle(
        "1",
        targetBundle(other, target, signer.publicUncompressed),
        client.publicCompressed,
        signer.publicUncompressed,
      ),
    );
    // The signed data swapped for another target.
    const swapped = JSON.parse(targetBundle(signer, target)) as Record<string, string>;
    swapped.data = Buffer.from(JSON.stringify({ targetPublic: other.publicUncompressed })).toString("hex");
    await assert.rejects(enc(JSON.stringify(swapped)), /signature verification failed/);
    await assert.rejects(enc("not json"), /not JSON/);
    await assert.rejects(enc(JSON.stringify({ enclaveQuorumPublic: signer.publicUncompressed })), /must hold/);
  });
});

describe("@sigil/client: tokens", () => {
  const sessionKey = generateP256();
  const tokenKey = generateP256();
  const now = Date.now();

  it("verifySessionJwt: the service's session JWTs with its SESSION_JWT key (as the SDK's verifySessionJwtSignature)", async () => {
    const jwt = signSessionJwt(serverKey("SESSION_JWT", sessionKey), {
      exp: Math.floor(now / 1000) + 900,
      public_key: "02ab",
      session_type: "SESSION_TYPE_READ_WRITE",
      user_id: "u",
      organization_id: "o",
    });
    assert.ok(await verifySessionJwtSignature(jwt, sessionKey.publicUncompressed));
    const claims = verifySessionJwt(jwt, [generateP256().publicUncompressed, sessionKey.publicUncompressed]);
    assert.deepEqual([claims.user_id, claims.organization_id, claims.session_type], ["u", "o", "SESSION_TYPE_READ_WRITE"]);
    assert.throws(() => verifySessionJwt(jwt, [tokenKey.publicUncompressed]), /not by a SESSION_JWT key/);
    assert.throws(() => verifySessionJwt(jwt, [sessionKey.publicUncompressed], { now: now + 901_000 }), /expired/);
    const [h, p, s] = jwt.split(".");
    const otherPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, "base64url").toString()), user_id: "x" })).toString(
      "base64url",
    );
    assert.throws(() => verifySessionJwt(`${h}.${otherPayload}.${s}`, [sessionKey.publicUncompressed]), /not by a SESSION_JWT key/);
    assert.throws(() => verifySessionJwt("a.b", [sessionKey.publicUncompressed]), /malformed/);
  });

  it("verifyVerificationToken: the service's verification tokens with its VERIFICATION_TOKEN key", () => {
    const { token } = signVerificationToken(serverKey("VERIFICATION_TOKEN", tokenKey), {
      exp: String(now + 60_000),
      organization_id: "o",
      verification_type: "OTP_TYPE_EMAIL",
      contact: "a@example.com",
      public_key: "02cd",
    });
    const claims = verifyVerificationToken(token, [tokenKey.publicUncompressed]);
    assert.deepEqual([claims.contact, claims.public_key, claims.verification_type], ["a@example.com", "02cd", "OTP_TYPE_EMAIL"]);
    assert.throws(() => verifyVerificationToken(token, [sessionKey.publicUncompressed]), /not by a VERIFICATION_TOKEN key/);
    assert.throws(() => verifyVerificationToken(token, [tokenKey.publicUncompressed], { now: now + 61_000 }), /expired/);
  });

  it("createSigilClient: fetches the published keys once, and once more when a check fails (a rotation)", async () => {
    let keys: ServiceKey[] = [
      { keyId: "k1", purpose: "SESSION_JWT", publicKey: sessionKey.publicUncompressed, createdAt: "1", status: "active" },
      { keyId: "k2", purpose: "OTP_ENCRYPTION_TARGET", publicKey: tokenKey.publicUncompressed, createdAt: "1", status: "active" },
      // Not returned: unknown purposes and retired keys.
      { keyId: "k3", purpose: "NOPE" as ServiceKey["purpose"], publicKey: sessionKey.publicUncompressed, createdAt: "1", status: "active" },
    ];
    const urls: string[] = [];
    const fakeFetch = (async (url: string) => {
      urls.push(url);
      return new Response(JSON.stringify({ keys }), { status: 200, headers: { "content-type": "application/json" } });
    }) as unknown as typeof fetch;
    const c = createSigilClient({ baseUrl: "https://sigil.example/", fetch: fakeFetch });
    assert.deepEqual(
      (await c.serviceKeys()).map((k) => k.keyId),
      ["k1", "k2"],
    );
    assert.deepEqual(publicKeysFor(await c.serviceKeys(), "SESSION_JWT"), [sessionKey.publicUncompressed]);
    assert.deepEqual(urls, ["https://sigil.example/public/v1/discovery/keys"]);
    const target = generateP256();
    const bundle = await c.encryptOtpCode({
      otpCode: "9",
      otpEncryptionTargetBundle: targetBundle(tokenKey, target),
      publicKey: sessionKey.publicCompressed,
    });
    assert.equal(decrypt(bundle, target).otp_code, "9");
    assert.equal(urls.length, 1);
    // Rotation: a bundle by a new key is refused with the cached set, accepted after one refetch.
    const rotated = generateP256();
    keys = [
      ...keys,
      { keyId: "k4", purpose: "OTP_ENCRYPTION_TARGET", publicKey: rotated.publicUncompressed, createdAt: "2", status: "active" },
    ];
    assert.equal(
      decrypt(
        await c.encryptOtpCode({
          otpCode: "8",
          otpEncryptionTargetBundle: targetBundle(rotated, target),
          publicKey: sessionKey.publicCompressed,
        }),
        target,
      ).otp_code,
      "8",
    );
    assert.equal(urls.length, 2);
    // A key nobody published stays refused (after its one refetch).
    await assert.rejects(
      c.encryptOtpCode({
        otpCode: "7",
        otpEncryptionTargetBundle: targetBundle(generateP256(), target),
        publicKey: sessionKey.publicCompressed,
      }),
      /not one of this service's/,
    );
    const jwt = signSessionJwt(serverKey("SESSION_JWT", sessionKey), {
      exp: Math.floor(now / 1000) + 60,
      public_key: "02ab",
      session_type: "SESSION_TYPE_READ_WRITE",
      user_id: "u",
      organization_id: "o",
    });
    assert.equal((await c.verifySessionJwt(jwt)).user_id, "u");
  });
});

describe("@sigil/client: verifyOtpWithProxy", () => {
  const otpSigner = generateP256();
  const tokenSigner = generateP256();
  const target = generateP256();
  const client = generateP256();
  const keys = [
    { keyId: "o", purpose: "OTP_ENCRYPTION_TARGET", publicKey: otpSigner.publicUncompressed, createdAt: "1", status: "active" },
    { keyId: "v", purpose: "VERIFICATION_TOKEN", publicKey: tokenSigner.publicUncompressed, createdAt: "1", status: "active" },
  ];
  const token = (publicKey: string) =>
    signVerificationToken(serverKey("VERIFICATION_TOKEN", tokenSigner), {
      exp: String(Date.now() + 60_000),
      organization_id: "o",
      verification_type: "OTP_TYPE_EMAIL",
      contact: "a@example.com",
      public_key: publicKey,
    }).token;

  /** The API's discovery and a proxy answering `answer` to otp_verify_v2; records what the proxy received. */
  function service(answer: (body: Record<string, string>) => Response) {
    const seen: { url: string; headers: Record<string, string>; body: Record<string, string> }[] = [];
    const fakeFetch = (async (url: string, init?: RequestInit) => {
      if (url === "https://api.example/public/v1/discovery/keys") return Response.json({ keys });
      const body = JSON.parse(String(init?.body)) as Record<string, string>;
      seen.push({ url, headers: init?.headers as Record<string, string>, body });
      return answer(body);
    }) as unknown as typeof fetch;
    return { seen, fakeFetch };
  }
  const params = (fakeFetch: typeof fetch) => ({
    authProxyUrl: "https://proxy.example/",
    authProxyConfigId: "cfg-1",
    apiBaseUrl: "https://api.example",
    otpId: "otp-1",
    otpEncryptionTargetBundle: targetBundle(otpSigner, target),
    otpCode: "ABCDEF",
    publicKey: client.publicCompressed,
    fetch: fakeFetch,
  });

  it("posts {otpId, encryptedOtpBundle} to /v1/otp_verify_v2 with the config header; the bundle opens to the code", async () => {
    const t = token(client.publicCompressed);
    const { seen, fakeFetch } = service(() => Response.json({ verificationToken: t }));
    const out = await verifyOtpWithProxy(params(fakeFetch));
    assert.deepEqual(out, { verificationToken: t, publicKey: client.publicCompressed });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.url, "https://proxy.example/v1/otp_verify_v2");
    assert.equal(seen[0]!.headers["X-Auth-Proxy-Config-ID"], "cfg-1");
    assert.deepEqual(Object.keys(seen[0]!.body), ["otpId", "encryptedOtpBundle"]);
    assert.equal(seen[0]!.body.otpId, "otp-1");
    assert.deepEqual(decrypt(seen[0]!.body.encryptedOtpBundle!, target), { otp_code: "ABCDEF", public_key: client.publicCompressed });
  });

  it("an error body becomes the SDK's message, code and status", async () => {
    const { fakeFetch } = service(() => Response.json({ code: 3, message: "Invalid OTP code", details: [] }, { status: 400 }));
    await assert.rejects(verifyOtpWithProxy(params(fakeFetch)), (e: unknown) => {
      assert.ok(e instanceof AuthProxyRequestError);
      assert.equal(e.name, "TurnkeyRequestError");
      assert.equal(e.message, "Turnkey error 3: Invalid OTP code (Details: [])");
      assert.equal(e.code, 3);
      assert.equal(e.status, 400);
      return true;
    });
    const { fakeFetch: notJson } = service(() => new Response("<html>", { status: 502, statusText: "Bad Gateway" }));
    await assert.rejects(verifyOtpWithProxy(params(notJson)), /^Error: 502 Bad Gateway$/);
  });

  it("refuses a bundle not signed by the service, and a token not the service's or bound to another key, before trusting it", async () => {
    const { seen, fakeFetch } = service(() => Response.json({ verificationToken: token(client.publicCompressed) }));
    await assert.rejects(
      verifyOtpWithProxy({ ...params(fakeFetch), otpEncryptionTargetBundle: targetBundle(generateP256(), target) }),
      /not one of this service's/,
    );
    assert.equal(seen.length, 0, "nothing is sent when the bundle is not the service's");
    const { fakeFetch: otherKey } = service(() => Response.json({ verificationToken: token(generateP256().publicCompressed) }));
    await assert.rejects(verifyOtpWithProxy(params(otherKey)), /bound to another key/);
    const forged = signVerificationToken(serverKey("VERIFICATION_TOKEN", generateP256()), {
      exp: String(Date.now() + 60_000),
      organization_id: "o",
      verification_type: "OTP_TYPE_EMAIL",
      contact: "a@example.com",
      public_key: client.publicCompressed,
    }).token;
    const { fakeFetch: forger } = service(() => Response.json({ verificationToken: forged }));
    await assert.rejects(verifyOtpWithProxy(params(forger)), /not by a VERIFICATION_TOKEN key/);
    await assert.rejects(verifyOtpWithProxy({ ...params(fakeFetch), otpCode: "" }), /otpCode must be a non-empty string/);
  });
});
