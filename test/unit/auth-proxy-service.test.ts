// The auth proxy's pure parts (docs/auth-proxy-service.md §2.2, §3, §4.1): origin matching,
// /v1/account's filter mapping, body reading, and the fixed-window counters its limits use.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { canonicalOrigin, originAllowed, preflightAllowed } from "../../src/proxy/origins.ts";
import { accountLookup, nameOtherThanContact, sameContact } from "../../src/proxy/account-filters.ts";
import { oidcClaims } from "../../src/logins/oauth/oidc-claims.ts";
import { readBody, SIGNUP, OTP_INIT, EMPTY } from "../../src/proxy/bodies.ts";
import { MemoryCounters } from "../../src/proxy/window-counters.ts";
import { ProxyLimiter } from "../../src/proxy/limits.ts";
import { ApiError } from "../../src/errors.ts";
import { oidcEmail } from "../../src/proxy/account-pii.ts";

const code = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as ApiError).code;
  }
  return undefined;
};

describe("auth proxy origins", () => {
  it("canonical origins: case of scheme and host, default port, trailing slash; nothing else is an origin", () => {
    assert.equal(canonicalOrigin("HTTPS://App.Example.com:443/"), "https://app.example.com");
    assert.equal(canonicalOrigin("http://localhost:5173"), "http://localhost:5173");
    assert.equal(canonicalOrigin("null"), undefined);
    assert.equal(canonicalOrigin(undefined), undefined);
    assert.equal(canonicalOrigin("https://app.example.com/path"), undefined);
    assert.equal(canonicalOrigin("file:///etc/passwd"), undefined);
    assert.equal(canonicalOrigin("not a url"), undefined);
  });

  it("an empty list allows everything, a request without Origin included", () => {
    assert.equal(originAllowed([], "https://evil.example"), true);
    assert.equal(originAllowed([], undefined), true);
  });

  it("a list allows exactly its origins; no Origin, other ports, subdomains and partial wildcards are refused", () => {
    const list = ["https://app.example.com", "http://localhost:3000", "https://*.example.com"];
    assert.equal(originAllowed(list, "https://app.example.com"), true);
    assert.equal(originAllowed(list, "https://APP.example.com"), true);
    assert.equal(originAllowed(list, "http://localhost:3000"), true);
    assert.equal(originAllowed(list, undefined), false);
    assert.equal(originAllowed(list, "http://localhost:3001"), false);
    assert.equal(originAllowed(list, "http://app.example.com"), false);
    assert.equal(originAllowed(list, "https://other.example.com"), false);
    assert.equal(originAllowed(list, "https://app.example.com.evil.test"), false);
    assert.equal(originAllowed(list, "null"), false);
  });

  it("preflights: an origin some enabled config allows, or any when one allows all", () => {
    assert.equal(preflightAllowed({ origins: ["https://a.test"], anyOrigin: false }, "https://a.test"), true);
    assert.equal(preflightAllowed({ origins: ["https://a.test"], anyOrigin: false }, "https://b.test"), false);
    assert.equal(preflightAllowed({ origins: [], anyOrigin: true }, "https://b.test"), true);
    assert.equal(preflightAllowed({ origins: [], anyOrigin: true }, undefined), false);
  });
});

describe("auth proxy /v1/account filters", () => {
  it("EMAIL and PHONE_NUMBER: verified look-up with a token, plain without; the contact is named", () => {
    assert.deepEqual(accountLookup("EMAIL", "a@b.test", true), {
      query: "list_verified_suborgs",
      filterType: "EMAIL",
      filterValue: "a@b.test",
      contact: { type: "OTP_TYPE_EMAIL", value: "a@b.test" },
    });
    assert.equal(accountLookup("EMAIL", "a@b.test", false).query, "list_suborgs");
    assert.deepEqual(accountLookup("PHONE_NUMBER", "+15555550100", false).contact, { type: "OTP_TYPE_SMS", value: "+15555550100" });
  });

  it("the other types go to list_suborgs as they are; OIDC_CLAIMS is checked and passed on as JSON", () => {
    for (const t of ["OIDC_TOKEN", "PUBLIC_KEY", "CREDENTIAL_ID", "NAME", "USERNAME"]) {
      const l = accountLookup(t, "v", false);
      assert.deepEqual([l.query, l.filterType, l.filterValue, l.contact], ["list_suborgs", t, "v", undefined]);
    }
    const l = accountLookup("OIDC_CLAIMS", JSON.stringify({ sub: "s", iss: "https://i", aud: "a", extra: 1 }), false);
    assert.equal(l.filterType, "OIDC_CLAIMS");
    assert.deepEqual(JSON.parse(l.filterValue), { iss: "https://i", sub: "s", aud: "a" });
  });

  it("unknown types and bad OIDC_CLAIMS values are 400; no prototype names", () => {
    assert.equal(
      code(() => accountLookup("WHATEVER", "v", false)),
      3,
    );
    assert.equal(
      code(() => accountLookup("constructor", "v", false)),
      3,
    );
    assert.equal(
      code(() => accountLookup("__proto__", "v", false)),
      3,
    );
    assert.equal(
      code(() => oidcClaims("not json")),
      3,
    );
    assert.equal(
      code(() => oidcClaims(JSON.stringify({ iss: "i", sub: "s" }))),
      3,
    );
    assert.equal(
      code(() => oidcClaims(JSON.stringify({ iss: "i", sub: "s", aud: 5 }))),
      3,
    );
    assert.equal(
      code(() => oidcClaims("[]")),
      3,
    );
  });

  it("contacts compare as the API does: emails in any case, phone numbers as written", () => {
    assert.equal(sameContact("OTP_TYPE_EMAIL", "A@B.test", "a@b.TEST"), true);
    assert.equal(sameContact("OTP_TYPE_EMAIL", "a@b.test", "a@c.test"), false);
    assert.equal(sameContact("OTP_TYPE_SMS", "+15555550100", "+15555550100"), true);
    assert.equal(sameContact("OTP_TYPE_SMS", "+15555550100", "+15555550101"), false);
  });

  it("an OIDC token's email counts only when the provider says it verified it (email_verified true)", () => {
    const tok = (p: object) => `e30.${Buffer.from(JSON.stringify(p)).toString("base64url")}.sig`;
    assert.equal(oidcEmail(tok({ email: "a@b.test", email_verified: true })), "a@b.test");
    assert.equal(oidcEmail(tok({ email: "a@b.test", email_verified: "true" })), "a@b.test");
    // No email_verified: the address is whatever the account holder typed.
    assert.equal(oidcEmail(tok({ email: "a@b.test" })), undefined);
    assert.equal(oidcEmail(tok({ email: "a@b.test", email_verified: "yes" })), undefined);
    assert.equal(oidcEmail(tok({ email: "a@b.test", email_verified: false })), undefined);
    assert.equal(oidcEmail("garbage"), undefined);
  });
});

describe("auth proxy request bodies", () => {
  it("required arrays must be present; types and sizes are checked; unknown fields are dropped", () => {
    const ok = readBody({ apiKeys: [], authenticators: [], oauthProviders: [], userEmail: "a@b.test", somethingNew: 1 }, SIGNUP);
    assert.deepEqual({ ...ok }, { apiKeys: [], authenticators: [], oauthProviders: [], userEmail: "a@b.test" });
    assert.equal(
      code(() => readBody({ apiKeys: [], authenticators: [] }, SIGNUP)),
      3,
    );
    assert.equal(
      code(() => readBody({ apiKeys: {}, authenticators: [], oauthProviders: [] }, SIGNUP)),
      3,
    );
    assert.equal(
      code(() => readBody({ otpType: "OTP_TYPE_EMAIL", contact: "x".repeat(255) }, OTP_INIT)),
      3,
    );
    assert.equal(
      code(() => readBody({ otpType: "OTP_TYPE_EMAIL", contact: 5 }, OTP_INIT)),
      3,
    );
    assert.equal(
      code(() => readBody([], EMPTY)),
      3,
    );
    assert.deepEqual({ ...readBody({}, EMPTY) }, {});
  });

  it("a __proto__ key in the body is neither read nor inherited", () => {
    const body = JSON.parse('{"__proto__": {"contact": "x@y.test"}, "otpType": "OTP_TYPE_EMAIL"}') as object;
    assert.equal(
      code(() => readBody(body, OTP_INIT)),
      3,
    );
  });
});

describe("auth proxy limits", () => {
  it("a window admits max hits, then says when it ends; a new window admits again", () => {
    let now = 1_000_000;
    const c = new MemoryCounters(() => now);
    for (let i = 0; i < 3; i++) assert.deepEqual(c.hitNow("k", 3, 60_000), { ok: true });
    now += 15_000;
    assert.deepEqual(c.hitNow("k", 3, 60_000), { ok: false, retryAfterMs: 45_000 });
    assert.deepEqual(c.hitNow("other", 3, 60_000), { ok: true });
    now += 45_000;
    assert.deepEqual(c.hitNow("k", 3, 60_000), { ok: true });
  });

  it("the bound evicts ended windows first, then the least recently used: a caller who keeps trying stays limited", () => {
    let now = 0;
    const c = new MemoryCounters(() => now, 32);
    c.hitNow("limited", 1, 3_600_000);
    for (let i = 0; i < 20; i++) c.hitNow(`old${i}`, 5, 1_000);
    now = 2_000;
    for (let i = 0; i < 200; i++) {
      c.hitNow(`new${i}`, 5, 1_000_000);
      if (i % 10 === 0) assert.equal(c.hitNow("limited", 1, 3_600_000).ok, false);
    }
    assert.ok(c.size <= 32);
    assert.equal(c.hitNow("limited", 1, 3_600_000).ok, false);
  });

  it("the limiter answers 429 with Retry-After; emails count in any case; 0 is off", async () => {
    const limiter = new ProxyLimiter(
      {
        otpInitsPerContactPerHour: 2,
        signupsPerAddressPerHour: 0,
        signupsPerConfigPerHour: 1,
        requestsPerOriginPerMinute: 0,
        requestsPerAddressPerMinute: 0,
      },
      new MemoryCounters(),
    );
    await limiter.otpInit("OTP_TYPE_EMAIL", "A@b.test");
    await limiter.otpInit("OTP_TYPE_EMAIL", "a@B.test");
    const err = (await limiter.otpInit("OTP_TYPE_EMAIL", "a@b.test").catch((e: unknown) => e)) as ApiError;
    assert.equal(err.code, 8);
    assert.equal(err.httpStatus, 429);
    assert.ok(err.retryAfterSeconds! > 3500 && err.retryAfterSeconds! <= 3600);
    for (let i = 0; i < 5; i++) await limiter.origin("cfg", [], "https://a.test");
    for (let i = 0; i < 5; i++) await limiter.address("203.0.113.9");
    await limiter.signup("cfg", "203.0.113.9");
    assert.equal(((await limiter.signup("cfg", "203.0.113.10").catch((e: unknown) => e)) as ApiError).code, 8);
  });

  const refused = (p: Promise<void>) =>
    p.then(
      () => undefined,
      (e: unknown) => (e as ApiError).code,
    );

  it("requests per client address: one count whatever the config or Origin; IPv6 per /64", async () => {
    const limiter = new ProxyLimiter(
      {
        otpInitsPerContactPerHour: 0,
        signupsPerAddressPerHour: 0,
        signupsPerConfigPerHour: 0,
        requestsPerOriginPerMinute: 0,
        requestsPerAddressPerMinute: 2,
      },
      new MemoryCounters(),
    );
    await limiter.address("2001:db8:1:2::1");
    await limiter.address("2001:db8:1:2:ffff::9");
    assert.equal(await refused(limiter.address("2001:db8:1:2::77")), 8);
    assert.equal(await refused(limiter.address("2001:db8:1:3::1")), undefined);
    await limiter.address("198.51.100.1");
    await limiter.address("198.51.100.1");
    const err = (await limiter.address("198.51.100.1").catch((e: unknown) => e)) as ApiError;
    assert.equal(err.httpStatus, 429);
    assert.ok(err.retryAfterSeconds! > 0 && err.retryAfterSeconds! <= 60);
    assert.equal(await refused(limiter.address("198.51.100.2")), undefined);
  });

  it("requests per origin: each listed origin its own count; origins a config does not list (all, for a config listing none) one count per config", async () => {
    const limiter = new ProxyLimiter(
      {
        otpInitsPerContactPerHour: 0,
        signupsPerAddressPerHour: 0,
        signupsPerConfigPerHour: 0,
        requestsPerOriginPerMinute: 2,
        requestsPerAddressPerMinute: 0,
      },
      new MemoryCounters(),
    );
    // Every origin admitted: invented origins, absent and "null" all count together.
    await limiter.origin("open", [], "https://one.test");
    await limiter.origin("open", [], undefined);
    for (const o of ["https://two.test", "null", undefined, "HTTPS://ONE.test"])
      assert.equal(await refused(limiter.origin("open", [], o)), 8, String(o));
    assert.equal(await refused(limiter.origin("other", [], "https://one.test")), undefined, "another config counts on its own");
    // Listed origins: one count each, in any spelling of the origin.
    const list = ["https://a.test", "https://b.test"];
    await limiter.origin("listed", list, "https://a.test");
    await limiter.origin("listed", list, "HTTPS://A.test:443");
    assert.equal(await refused(limiter.origin("listed", list, "https://a.test")), 8);
    assert.equal(await refused(limiter.origin("listed", list, "https://b.test")), undefined);
  });
});

describe("auth proxy sign-up names", () => {
  it("a chosen name that is the user's own email or phone number is dropped (the default is used); others are kept", () => {
    assert.equal(nameOtherThanContact(" Alice@Example.com ", "alice@example.com", undefined), undefined);
    assert.equal(nameOtherThanContact("+15550001111", undefined, "+15550001111"), undefined);
    assert.equal(nameOtherThanContact("Alice", "alice@example.com", "+15550001111"), "Alice");
    assert.equal(nameOtherThanContact(undefined, "alice@example.com", undefined), undefined);
  });
});
