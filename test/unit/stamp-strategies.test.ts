// The one list of stamp kinds (src/auth/strategies.ts, docs/stamps.md §7): everything that
// reads it — the SIGNATURE_MISSING text, CORS, log redaction, rate-limit and allowlist keys,
// the routes a kind may sign — gives exactly what the SDKs and operators saw before the list
// was the single source, so a new kind cannot change them by accident.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import pino from "pino";
import { ApiError } from "../../src/errors.ts";
import { STAMP_HEADERS, STRATEGIES, refuseUnsignableRoute, strategyOf, verifyStamp } from "../../src/auth/strategies.ts";
import type { Principal } from "../../src/auth/principal.ts";
import { corsAllowedHeaders } from "../../src/network/cors.ts";
import { listKeyOf } from "../../src/network/enforce.ts";
import { LOG_REDACT_PATHS } from "../../src/cli/serve.ts";

function principal(kind: string, extra: Partial<Principal["credential"]> = {}): Principal {
  return {
    actor: { userId: "u", userName: "n", organizationId: "o", organizationName: "on" },
    user: {} as Principal["user"],
    organization: { id: "o" },
    credential: { kind, id: `${kind}-id`, type: "CREDENTIAL_TYPE_API_KEY_P256", expiresAt: null, ...extra },
    stamp: { publicKey: "02ABCDEF", scheme: "S", signature: "00" },
    fromAncestor: false,
  };
}

describe("stamp strategies: one list", () => {
  it("the headers, in the order errors and CORS name them", () => {
    assert.deepEqual(STAMP_HEADERS, ["x-stamp", "x-stamp-webauthn", "x-stamp-attested", "x-session"]);
    assert.deepEqual(
      STRATEGIES.map((s) => s.credentialKind),
      ["api_key", "authenticator", "attested", "read_only_session"],
    );
  });

  it("CORS allows exactly the SDKs' headers", () => {
    // X-Session: @turnkey/sdk-browser's read-only session header (docs/sessions-and-network.md §7.2).
    assert.deepEqual(corsAllowedHeaders(STAMP_HEADERS), [
      "content-type",
      "x-client-version",
      "x-stamp",
      "x-stamp-webauthn",
      "x-stamp-attested",
      "x-session",
    ]);
  });

  it("no stamp: SIGNATURE_MISSING with upstream's wording (X-Stamp/X-Stamp-WebAuthn only)", async () => {
    await assert.rejects(verifyStamp({}, Buffer.from("{}")), (e: unknown) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.category, "SIGNATURE_MISSING");
      assert.equal(e.message, "cannot authenticate public API request without a stamp (X-Stamp/X-Stamp-WebAuthn header)");
      return true;
    });
  });

  it("two stamp headers: UNAUTHENTICATED naming both", async () => {
    await assert.rejects(
      verifyStamp({ "x-stamp": "a", "x-stamp-attested": "b" }, Buffer.from("{}")),
      /exactly one stamp header is allowed, got x-stamp, x-stamp-attested/,
    );
  });

  it("every stamp header is redacted from the logs", () => {
    // The header paths (secret parameters have theirs too: test/unit/secret-params.test.ts).
    assert.deepEqual(
      LOG_REDACT_PATHS.filter((p) => p.startsWith("req.headers")),
      [
        "req.headers.authorization",
        'req.headers["x-stamp"]',
        'req.headers["x-stamp-webauthn"]',
        'req.headers["x-stamp-attested"]',
        'req.headers["x-session"]',
      ],
    );
    let out = "";
    const sink = new Writable({ write: (chunk, _enc, done) => ((out += String(chunk)), done()) });
    const log = pino({ redact: [...LOG_REDACT_PATHS] }, sink);
    log.info(
      {
        req: {
          headers: {
            "x-stamp": "S1",
            "x-stamp-webauthn": "S2",
            "x-stamp-attested": "S3",
            "x-session": "S4",
            "content-type": "application/json",
          },
        },
      },
      "r",
    );
    assert.ok(!/S1|S2|S3|S4/.test(out), out);
    assert.match(out, /application\/json/);
  });

  it("rate-limit buckets stay kind:id (shared through Redis)", () => {
    for (const kind of ["api_key", "authenticator", "attested", "read_only_session"]) {
      const p = principal(kind);
      assert.equal(strategyOf(p).rateLimitKey(p), `${kind}:${kind}-id`);
    }
  });

  it("the allowlist key: an API key's own (lower-case), a session's creator's; none for the other kinds", () => {
    assert.equal(listKeyOf(principal("api_key")), "02abcdef");
    assert.equal(listKeyOf(principal("api_key", { allowlistKey: "03ff" })), "03ff");
    assert.equal(listKeyOf(principal("authenticator")), undefined);
    assert.equal(listKeyOf(principal("attested")), undefined);
    // A read-only session: the key that asked for it, when one did.
    assert.equal(listKeyOf(principal("read_only_session")), undefined);
    assert.equal(listKeyOf(principal("read_only_session", { allowlistKey: "03ff" })), "03ff");
  });

  it("an attested stamp signs stamp_login and nothing else; the others sign anything", () => {
    const attested = principal("attested");
    refuseUnsignableRoute(attested, "ACTIVITY_TYPE_STAMP_LOGIN");
    for (const type of ["ACTIVITY_TYPE_CREATE_USER_TAG", "ACTIVITY_TYPE_APPROVE_ACTIVITY", undefined]) {
      assert.throws(
        () => refuseUnsignableRoute(attested, type),
        (e: unknown) =>
          e instanceof ApiError &&
          e.category === "UNAUTHENTICATED" &&
          e.message ===
            "an X-Stamp-Attested stamp may only sign ACTIVITY_TYPE_STAMP_LOGIN (POST /public/v1/submit/stamp_login); sign every other request with the session key it returns (X-Stamp)",
      );
    }
    for (const kind of ["api_key", "authenticator"]) {
      refuseUnsignableRoute(principal(kind), "ACTIVITY_TYPE_CREATE_USER_TAG");
      refuseUnsignableRoute(principal(kind), undefined);
    }
  });

  it("a read-only session (X-Session) signs queries and no activity (403)", () => {
    const readOnly = principal("read_only_session");
    refuseUnsignableRoute(readOnly, undefined);
    for (const type of ["ACTIVITY_TYPE_CREATE_USER_TAG", "ACTIVITY_TYPE_STAMP_LOGIN", "ACTIVITY_TYPE_APPROVE_ACTIVITY"]) {
      assert.throws(
        () => refuseUnsignableRoute(readOnly, type),
        (e: unknown) => e instanceof ApiError && e.httpStatus === 403 && /read-only session/.test(e.message),
      );
    }
  });
});
