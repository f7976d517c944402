// The login methods (docs/logins.md §8): each declares the activity types a parent's
// credential may submit, its knobs and its part of the login settings. These checks hold the
// list together: what a method opens to parents is registered or a documented legacy type,
// no type is claimed twice, knob names are unique, and the assembled settings are complete.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { ACTIVITIES, VOTES, activityByType } from "../../src/activities/registry.ts";
import { LOGIN_KNOBS, LOGIN_METHODS, LOGIN_PARENT_PATTERNS } from "../../src/logins/index.ts";
import { defineLoginMethod, parentPattern } from "../../src/logins/define.ts";
import { PARENT_STAMPABLE, isParentStampable } from "../../src/pipeline/parent-writes.ts";
import { KNOBS, loadConfig } from "../../src/config.ts";
import { loginSettingsFrom } from "../../src/logins/configure.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const ROUTES = [...ACTIVITIES, ...VOTES];

/** The text of docs/logins.md §8.3 (up to the next heading). */
function legacySection(): string {
  const doc = readFileSync(path.join(ROOT, "docs/logins.md"), "utf8");
  const start = doc.indexOf("\n### 8.3 ");
  assert.ok(start >= 0, "docs/logins.md has no §8.3");
  const end = doc.indexOf("\n#", start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

const quiet = { info() {}, warn() {} };

describe("login methods", () => {
  it("names are unique and each method lives in the folder of its name", () => {
    const names = LOGIN_METHODS.map((m) => m.name);
    assert.deepEqual(
      names.filter((n, i) => names.indexOf(n) !== i),
      [],
    );
    assert.ok(names.length >= 5, names.join());
    for (const n of names) assert.ok(existsSync(path.join(ROOT, "src/logins", n, "index.ts")), `src/logins/${n}/index.ts`);
  });

  it("every type a method opens to parents is registered, or a legacy type listed in docs/logins.md §8.3", () => {
    const section = legacySection();
    let registered = 0;
    for (const m of LOGIN_METHODS) {
      for (const spec of m.parentStampable) {
        const p = parentPattern(spec);
        const served = ROUTES.filter((r) => p.test(r.type)).map((r) => r.type);
        if (spec.legacy) {
          assert.ok(section.includes("`" + spec.type + "`"), `${m.name}: legacy ${spec.type} is not listed in docs/logins.md §8.3`);
        } else {
          assert.ok(
            served.length > 0,
            `${m.name}: ${spec.type} matches no registered activity (mark it legacy and document it, or drop it)`,
          );
          // What the method opens, the registry's definition opens too (parentMayStamp).
          for (const t of served) assert.equal(activityByType(t)?.parentMayStamp, true, `${m.name}: ${t} does not set parentMayStamp`);
          registered++;
        }
      }
    }
    assert.ok(registered >= 5, `only ${registered} registered parent types`);
  });

  it("no two methods claim one type, and every type a definition opens to parents belongs to exactly one method", () => {
    const specs = LOGIN_METHODS.flatMap((m) => m.parentStampable.map((s) => ({ method: m.name, type: s.type })));
    const types = specs.map((s) => s.type);
    assert.deepEqual(
      types.filter((t, i) => types.indexOf(t) !== i),
      [],
      "a type declared twice",
    );
    // Patterns could overlap without sharing a base name (a prefix with everyVersion).
    const candidates = [...new Set([...types, ...types.flatMap((t) => [`${t}_V2`, `${t}_V3`]), ...ROUTES.map((r) => r.type)])];
    for (const t of candidates) {
      const claimants = LOGIN_METHODS.filter((m) => m.parentPatterns.some((p) => p.test(t))).map((m) => m.name);
      assert.ok(claimants.length <= 1, `${t} is claimed by ${claimants.join(" and ")}`);
    }
    for (const r of ROUTES.filter((r) => r.parentMayStamp)) {
      assert.equal(LOGIN_METHODS.filter((m) => m.parentPatterns.some((p) => p.test(r.type))).length, 1, r.type);
    }
  });

  it("PARENT_STAMPABLE is exactly the methods' patterns, anchored", () => {
    assert.equal(PARENT_STAMPABLE, LOGIN_PARENT_PATTERNS);
    assert.deepEqual(
      PARENT_STAMPABLE.map(String),
      LOGIN_METHODS.flatMap((m) => m.parentStampable.map((s) => String(parentPattern(s)))),
    );
    for (const p of PARENT_STAMPABLE) assert.ok(p.source.startsWith("^ACTIVITY_TYPE_") && p.source.endsWith("$"), String(p));
    assert.ok(isParentStampable("ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2"));
    assert.equal(isParentStampable("ACTIVITY_TYPE_OAUTH_LOGIN_V2"), false);
  });

  it("a parent type is written without a version, as an activity type", () => {
    assert.throws(() => parentPattern({ type: "ACTIVITY_TYPE_INIT_OTP_V3" }), /without its version suffix/);
    assert.throws(() => parentPattern({ type: "ACTIVITY_TYPE_A.*" }), /without its version suffix/);
    assert.deepEqual(
      defineLoginMethod({
        name: "x",
        doc: "docs/logins.md §8",
        activities: [],
        parentStampable: [{ type: "ACTIVITY_TYPE_X", everyVersion: true }],
        knobs: [],
        settings: () => ({}),
      }).parentPatterns.map(String),
      [String(/^ACTIVITY_TYPE_X(_V\d+)?$/)],
    );
  });

  it("every activity a method names is registered", () => {
    for (const m of LOGIN_METHODS) {
      for (const t of m.activities) assert.ok(activityByType(t), `${m.name}: ${t} is not in src/activities/registry.ts`);
    }
  });

  it("knob variables, flags and fields are unique across methods, and every one is in KNOBS once, in list order", () => {
    for (const field of ["env", "flag", "key"] as const) {
      const names = LOGIN_KNOBS.map((k) => k[field]).filter((n) => n !== undefined);
      assert.deepEqual(
        names.filter((n, i) => names.indexOf(n) !== i),
        [],
        `duplicate ${field} among the login methods' knobs`,
      );
    }
    const all = KNOBS.map((k) => k.env);
    const login = LOGIN_KNOBS.map((k) => k.env);
    assert.deepEqual(
      LOGIN_METHODS.flatMap((m) => m.knobs.map((k) => k.env)),
      login,
    );
    const at = all.indexOf(login[0]!);
    assert.deepEqual(all.slice(at, at + login.length), login, "the login knobs stand together in KNOBS, in LOGIN_METHODS order");
    for (const env of login) assert.equal(all.filter((e) => e === env).length, 1, env);
  });

  it("the assembled settings hold every method's part, built from its knobs", () => {
    const s = loginSettingsFrom(
      loadConfig({
        PORT: "9177",
        SIGIL_SESSION_MAX_SECONDS: "600",
        SIGIL_WEBAUTHN_ORIGINS: "https://a.example",
        SIGIL_OTP_GUESSES_PER_CONTACT: "7",
        SIGIL_MAIL_SENDER_DOMAINS: "Example.com",
        SMTP_URL: "smtp://127.0.0.1:2525",
      }),
      quiet,
    );
    assert.equal(s.sessionMaxSeconds, 600);
    assert.deepEqual(s.webauthn, { origins: ["https://a.example"] });
    assert.equal(s.otpLimits?.guessesPerContact, 7);
    assert.deepEqual(s.mailSenderDomains, ["example.com"]);
    assert.equal(s.email?.kind, "smtp");
    assert.equal(s.sms, undefined);
    assert.equal(s.oauth?.publicUrl, "http://localhost:9177");
  });

  it("the OAuth loopback switch is warned about when the settings are built", () => {
    const warned: string[] = [];
    loginSettingsFrom(loadConfig({ SIGIL_OAUTH_ALLOW_LOOPBACK: "true" }), { info() {}, warn: (o) => warned.push(JSON.stringify(o)) });
    assert.deepEqual(warned, [JSON.stringify({ setting: "SIGIL_OAUTH_ALLOW_LOOPBACK" })]);
  });
});
