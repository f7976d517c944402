// The WebAuthn checks as pure functions (src/logins/passkey/): the challenge vector of docs/stamps.md §3.2,
// encodings, and registration / assertion checks against a software authenticator.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { canonicalB64url, decodeBase64Any, stampChallenge } from "../../src/logins/passkey/encoding.ts";
import { assertionSignatureValid, checkAssertion, decodeAssertion, type Assertion } from "../../src/logins/passkey/assertion.ts";
import { verifyRegistration, type AuthenticatorParams, type WebauthnSettings } from "../../src/logins/passkey/registration.ts";
import { ApiError } from "../../src/errors.ts";
import { SoftPasskey } from "../helpers/webauthn.ts";

const SETTINGS: WebauthnSettings = { rpId: "localhost", origins: ["http://localhost:3000"] };
const ANY: WebauthnSettings = { origins: [] };

describe("webauthn encodings", () => {
  it("the docs/stamps.md §3.2 test vector: challenge = b64url(ASCII hex of SHA-256(body))", () => {
    const body = '{"organization_id":"1234","type":"ACTIVITY_TYPE_CREATE_API_KEYS","params":{"for":"example"}}';
    const challenge = stampChallenge(Buffer.from(body));
    assert.equal(challenge.toString("ascii"), "a7e99164662710b0322dc69d19cba853e0c8a68f9251f027f0c5afb018aec086");
    assert.equal(challenge.toString("base64url"), "YTdlOTkxNjQ2NjI3MTBiMDMyMmRjNjlkMTljYmE4NTNlMGM4YTY4ZjkyNTFmMDI3ZjBjNWFmYjAxOGFlYzA4Ng");
  });

  it("base64 and base64url, padded or not, decode to the same bytes; other text does not decode", () => {
    const bytes = Buffer.from([0xfb, 0xff, 0xbf, 0x01]);
    for (const s of [
      bytes.toString("base64"),
      bytes.toString("base64url"),
      bytes.toString("base64").replace(/=+$/, ""),
      bytes.toString("base64url") + "==",
    ]) {
      assert.deepEqual(decodeBase64Any(s), bytes, s);
      assert.equal(canonicalB64url(s), "-_-_AQ");
    }
    for (const s of ["a b", "abc!", "A", "AA=A"]) assert.equal(decodeBase64Any(s), undefined, s);
  });
});

async function registrationProblem(p: AuthenticatorParams, settings: WebauthnSettings = SETTINGS): Promise<string | undefined> {
  try {
    await verifyRegistration(p, settings, "a");
    return undefined;
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return err.message;
  }
}

describe("registration checks", () => {
  it("accepts a none attestation (ES256, RS256) and extracts key, aaguid, counter", async () => {
    for (const alg of ["ES256", "RS256"] as const) {
      const pk = new SoftPasskey({ alg, counter: 7 });
      const r = await verifyRegistration(pk.registration() as AuthenticatorParams, SETTINGS, "a");
      assert.equal(r.credentialIdNormalized, pk.id);
      assert.equal(r.publicKey, pk.coseKey().toString("base64url"));
      assert.equal(r.attestationType, "none");
      assert.equal(r.aaguid, "00000000-0000-0000-0000-000000000000");
      assert.equal(r.signCount, 7);
    }
  });

  it("with nothing configured, any origin and RP ID are accepted", async () => {
    const pk = new SoftPasskey({ rpId: "app.example", origin: "https://app.example" });
    assert.equal(await registrationProblem(pk.registration() as AuthenticatorParams, ANY), undefined);
    assert.match((await registrationProblem(pk.registration() as AuthenticatorParams))!, /origin/);
  });

  it("refuses a wrong challenge, type, origin, RP ID, presence, credential id", async () => {
    const pk = new SoftPasskey();
    const cases: [AuthenticatorParams, RegExp][] = [
      [{ ...(pk.registration() as AuthenticatorParams), challenge: "AAAA" }, /a\.challenge/],
      [pk.registration({ type: "webauthn.get" }) as AuthenticatorParams, /webauthn\.create/],
      [pk.registration({ origin: "http://localhost:3001" }) as AuthenticatorParams, /origin/],
      [pk.registration({ rpId: "example.com" }) as AuthenticatorParams, /RP ID/],
      [pk.registration({ flags: 0x44 }) as AuthenticatorParams, /presence/i],
      [pk.registration({ authDataCredentialId: Buffer.from("other") }) as AuthenticatorParams, /credentialId/],
    ];
    for (const [p, re] of cases) assert.match((await registrationProblem(p)) ?? "accepted", re);
  });
});

function assertionOf(header: string): Assertion {
  const a = decodeAssertion(JSON.parse(header) as Record<string, unknown>);
  assert.ok(!("malformed" in a) && !("invalid" in a), JSON.stringify(a));
  return a;
}

describe("assertion checks", () => {
  const body = Buffer.from('{"organizationId":"x"}');

  it("an honest assertion passes, in b64url and in base64; its signature verifies with the COSE key", async () => {
    for (const alg of ["ES256", "RS256"] as const) {
      const pk = new SoftPasskey({ alg });
      for (const base64 of [false, true]) {
        const a = assertionOf(pk.stamp(body.toString(), { base64 }));
        assert.equal(a.credentialId, pk.id);
        assert.equal(checkAssertion(a, body, SETTINGS), undefined);
        assert.equal(await assertionSignatureValid(a, pk.coseKey().toString("base64url")), true);
        assert.equal(await assertionSignatureValid(a, new SoftPasskey({ alg }).coseKey().toString("base64url")), false);
      }
    }
  });

  it("refuses another body, type, origin, RP ID, and no user presence", () => {
    const pk = new SoftPasskey();
    const problem = (o: Parameters<SoftPasskey["stamp"]>[1]) =>
      JSON.stringify(checkAssertion(assertionOf(pk.stamp(body.toString(), o)), body, SETTINGS));
    assert.match(problem({ challengeBody: "{}" }), /challenge/);
    assert.match(problem({ type: "webauthn.create" }), /webauthn.get/);
    assert.match(problem({ origin: "https://evil.example" }), /origin/);
    assert.match(problem({ rpId: "evil.example" }), /RP ID/);
    assert.match(problem({ flags: 0x04 }), /user-present/);
    // Unconfigured: origin and RP ID are not checked, the rest still is.
    assert.equal(
      checkAssertion(assertionOf(pk.stamp(body.toString(), { origin: "https://any.example", rpId: "any.example" })), body, ANY),
      undefined,
    );
  });

  it("reads the signature counter; refuses short authenticator data and non-base64 fields", () => {
    const pk = new SoftPasskey({ counter: 41 });
    assert.equal(assertionOf(pk.stamp("x")).signCount, 42);
    const fields = JSON.parse(pk.stamp("x")) as Record<string, string>;
    assert.ok("malformed" in decodeAssertion({ ...fields, authenticatorData: "AAAA" }));
    assert.ok("malformed" in decodeAssertion({ ...fields, signature: "not base64!" }));
    assert.ok("malformed" in decodeAssertion({ ...fields, credentialId: 5 }));
  });
});
