// Secret parameters (docs/activities.md §10): path checks, redaction, sealing bound to the
// activity and field, the vote message rewrite, the definitions that declare them, and the log
// redaction paths as pino applies them.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { Type } from "@sinclair/typebox";
import pino from "pino";
import { MasterKey } from "../../src/crypto/envelope.ts";
import {
  SECRET_PLACEHOLDER,
  checkSecretPaths,
  mapMessageSecrets,
  openSecrets,
  redactSecrets,
  relaxSecrets,
  sealSecrets,
  secretLogPaths,
} from "../../src/activities/secret-params.ts";
import { compile } from "../../src/schemas/validate.ts";
import { defineActivity } from "../../src/activities/define.ts";
import { ACTIVITIES, activityByType } from "../../src/activities/registry.ts";
import { LOG_REDACT_PATHS } from "../../src/cli/serve.ts";

const Params = Type.Object({
  id: Type.String(),
  code: Type.String({ pattern: "^[0-9]{6}$" }),
  nested: Type.Optional(Type.Object({ token: Type.Optional(Type.String({ minLength: 43, maxLength: 43 })) })),
});

describe("secret parameters", () => {
  it("a path must name a string field: an unknown or non-string path stops the definition", () => {
    checkSecretPaths("T", Params, ["code", "nested.token"]);
    assert.throws(() => checkSecretPaths("T", Params, ["cod"]), /names no field/);
    assert.throws(() => checkSecretPaths("T", Params, ["nested"]), /must name a string field/);
    assert.throws(() => checkSecretPaths("T", Params, ["nested.token.x"]), /names no field/);
    assert.throws(
      () =>
        defineActivity({
          type: "ACTIVITY_TYPE_X",
          resource: "R",
          action: "A",
          kind: "K",
          summary: "",
          params: Params,
          returns: Type.Object({}),
          secretParams: ["nope"],
          execute: async () => ({}),
        }),
      /secretParams path "nope"/,
    );
  });

  it("redaction copies: the placeholder in each present secret field, absent ones stay absent, the input unchanged", () => {
    const p = { id: "a", code: "123456", nested: { token: "t".repeat(43) } };
    const r = redactSecrets(p, ["code", "nested.token"]);
    assert.deepEqual(r, { id: "a", code: SECRET_PLACEHOLDER, nested: { token: SECRET_PLACEHOLDER } });
    assert.equal(p.code, "123456");
    assert.equal(p.nested.token, "t".repeat(43));
    assert.deepEqual(redactSecrets({ id: "a", code: "1" }, ["nested.token"]), { id: "a", code: "1" });
    // The relaxed schema accepts the placeholder (and a sealed value) where the strict one does not.
    const strict = compile(Params);
    const relaxed = compile(relaxSecrets(Params, ["code", "nested.token"]));
    assert.equal(strict.is(r), false);
    assert.equal(relaxed.is(r), true);
    assert.equal(relaxed.is({ id: "a", code: 5 }), false);
    assert.equal(relaxed.is({ id: "a" }), false, "a required secret stays required");
  });

  it("a sealed value opens for its own activity and field only, and with its own master key", async () => {
    const key = MasterKey.generate();
    const p = { id: "a", code: "123456", nested: { token: "t".repeat(43) } };
    const sealed = await sealSecrets(p, ["code", "nested.token"], key, "act-1");
    assert.ok(!JSON.stringify(sealed).includes("123456"));
    assert.ok(!JSON.stringify(sealed).includes("t".repeat(43)));
    assert.deepEqual(await openSecrets(sealed, ["code", "nested.token"], key, "act-1"), p);
    await assert.rejects(() => openSecrets(sealed, ["code"], key, "act-2"));
    await assert.rejects(
      () => openSecrets({ ...sealed, code: (sealed.nested as { token: string }).token }, ["code"], key, "act-1"),
      "moved to another field",
    );
    await assert.rejects(() => openSecrets(sealed, ["code"], MasterKey.generate(), "act-1"), /another master key/);
  });

  it("a vote message of the activity's own type has its secrets rewritten; other bodies are kept byte for byte", () => {
    const body = JSON.stringify({
      type: "ACTIVITY_TYPE_VERIFY_OTP",
      timestampMs: "1",
      organizationId: "o",
      parameters: { otpId: "x", otpCode: "123456" },
    });
    const shown = mapMessageSecrets(body, "ACTIVITY_TYPE_VERIFY_OTP", ["otpCode"], (p) => redactSecrets(p, ["otpCode"]));
    assert.ok(!shown.includes("123456"));
    assert.equal(JSON.parse(shown).parameters.otpCode, SECRET_PLACEHOLDER);
    const approve = JSON.stringify({ type: "ACTIVITY_TYPE_APPROVE_ACTIVITY", parameters: { fingerprint: "f", otpCode: "keep" } });
    assert.equal(
      mapMessageSecrets(approve, "ACTIVITY_TYPE_VERIFY_OTP", ["otpCode"], () => ({})),
      approve,
    );
    assert.equal(
      mapMessageSecrets("not json", "ACTIVITY_TYPE_VERIFY_OTP", ["otpCode"], () => ({})),
      "not json",
    );
  });

  it("the definitions declare the plain codes and one-time tokens", () => {
    assert.deepEqual(activityByType("ACTIVITY_TYPE_VERIFY_OTP")?.secretParams, ["otpCode"]);
    assert.equal(activityByType("ACTIVITY_TYPE_VERIFY_OTP_V2")?.secretParams, undefined);
    assert.deepEqual(activityByType("ACTIVITY_TYPE_OTP_AUTH")?.secretParams, ["otpCode"]);
    assert.deepEqual(activityByType("ACTIVITY_TYPE_ACCEPT_INVITATION_V2")?.secretParams, ["invitationToken"]);
    assert.deepEqual(activityByType("ACTIVITY_TYPE_OAUTH2_AUTHENTICATE")?.secretParams, ["authCode", "codeVerifier"]);
  });

  it("the service's pino redaction hides every declared secret in a logged body or parameters", () => {
    const paths = secretLogPaths(ACTIVITIES);
    for (const p of paths) assert.ok(LOG_REDACT_PATHS.includes(p), p);
    const lines: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    const log = pino({ redact: [...LOG_REDACT_PATHS] }, out);
    log.info(
      {
        req: { body: { parameters: { otpId: "x", otpCode: "314159" } } },
        params: { invitationToken: "I".repeat(43), authCode: "ac-secret" },
      },
      "logged",
    );
    const text = lines.join("");
    for (const secret of ["314159", "I".repeat(43), "ac-secret"]) assert.ok(!text.includes(secret), text);
    assert.ok(text.includes('"otpId":"x"'), text);
  });
});
