// Address and range parsing, normalisation and matching (src/network/address.ts), the
// allowlist decision (src/network/allowlist.ts) and the configuration parsers of the network
// knobs (trust proxy, CORS origins).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { contains, formatAddress, parseAddress, parseRange, type Range } from "../../src/network/address.ts";
import { admits, compileAllowlists, PREFIX_BOUNDS } from "../../src/network/allowlist.ts";
import { parseTrustProxy, fastifyTrustProxy } from "../../src/network/trust-proxy.ts";
import { parseCorsOrigins } from "../../src/network/cors.ts";
import { loadConfig } from "../../src/config.ts";

const range = (text: string): Range => {
  const r = parseRange(text, PREFIX_BOUNDS);
  assert.notEqual(typeof r, "string", String(r));
  return r as Range;
};

describe("addresses", () => {
  it("parses IPv4 and IPv6; an IPv4-mapped IPv6 address is the IPv4 address", () => {
    assert.deepEqual(parseAddress("10.1.2.3"), { family: 4, bytes: Uint8Array.from([10, 1, 2, 3]) });
    assert.deepEqual(parseAddress("::ffff:10.1.2.3"), { family: 4, bytes: Uint8Array.from([10, 1, 2, 3]) });
    assert.deepEqual(parseAddress("::FFFF:a01:203"), { family: 4, bytes: Uint8Array.from([10, 1, 2, 3]) });
    assert.equal(parseAddress("2001:db8::1")?.family, 6);
    for (const bad of ["", "1.2.3", "1.2.3.256", "01.2.3.4x", "fe80::1%eth0", "2001:db8::1::2", "::g", "1.2.3.4/24", "localhost"]) {
      assert.equal(parseAddress(bad), undefined, bad);
    }
  });

  it("formats IPv6 in RFC 5952 form", () => {
    const f = (t: string) => formatAddress(parseAddress(t)!);
    assert.equal(f("2001:0DB8:0000:0000:0000:0000:0000:0001"), "2001:db8::1");
    assert.equal(f("2001:db8:0:1:0:0:0:1"), "2001:db8:0:1::1");
    assert.equal(f("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
    assert.equal(f("::"), "::");
    assert.equal(f("::1"), "::1");
    assert.equal(f("1::"), "1::");
    assert.equal(f("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2:3:4:5:6");
    assert.equal(f("2001:db8:0:2:3:4:5:6"), "2001:db8:0:2:3:4:5:6");
  });
});

describe("ranges", () => {
  it("normalises the network and the prefix; a bare address is a host", () => {
    assert.equal(range("192.168.1.100/24").cidr, "192.168.1.0/24");
    assert.equal(range("192.168.1.100").cidr, "192.168.1.100/32");
    assert.equal(range("10.0.31.255/20").cidr, "10.0.16.0/20");
    assert.equal(range("2001:DB8:ABCD:12::7/48").cidr, "2001:db8:abcd::/48");
    assert.equal(range("2001:db8::7").cidr, "2001:db8::7/128");
    assert.equal(range("::ffff:192.168.1.1/120").cidr, "192.168.1.0/24");
  });

  it("bounds: /20–/32 IPv4, /48–/128 IPv6", () => {
    assert.match(parseRange("10.0.0.0/19", PREFIX_BOUNDS) as string, /IPv4 prefixes must be from \/20 to \/32/);
    assert.match(parseRange("2001:db8::/47", PREFIX_BOUNDS) as string, /IPv6 prefixes must be from \/48 to \/128/);
    assert.match(parseRange("10.0.0.0/33", PREFIX_BOUNDS) as string, /0 to 32/);
    assert.match(parseRange("2001:db8::/129", PREFIX_BOUNDS) as string, /0 to 128/);
    assert.match(parseRange("10.0.0.0/024", PREFIX_BOUNDS) as string, /prefix length/);
    assert.match(parseRange("10.0.0.0/", PREFIX_BOUNDS) as string, /prefix length/);
    assert.match(parseRange("::ffff:1.2.3.4/95", PREFIX_BOUNDS) as string, /at least \/96/);
    // Without bounds (proxy lists), anything goes.
    assert.equal((parseRange("0.0.0.0/0") as Range).cidr, "0.0.0.0/0");
  });

  it("matches exactly the range: edges in and just outside", () => {
    const v4 = range("198.51.96.0/20");
    assert.ok(contains(v4, parseAddress("198.51.96.0")!));
    assert.ok(contains(v4, parseAddress("198.51.111.255")!));
    assert.ok(!contains(v4, parseAddress("198.51.112.0")!));
    assert.ok(!contains(v4, parseAddress("198.51.95.255")!));
    assert.ok(contains(v4, parseAddress("::ffff:198.51.100.1")!));
    const v6 = range("2001:db8:abcd::/48");
    assert.ok(contains(v6, parseAddress("2001:db8:abcd:ffff:ffff:ffff:ffff:ffff")!));
    assert.ok(!contains(v6, parseAddress("2001:db8:abce::")!));
    assert.ok(!contains(v6, parseAddress("10.0.0.1")!));
    assert.ok(!contains(range("0.0.0.0/32"), parseAddress("::")!));
  });
});

describe("allowlist decision", () => {
  const list = (publicKey: string, rules: string[], enabled = true, onEvaluationError: "ALLOW" | "DENY" = "DENY") => ({
    publicKey,
    enabled,
    onEvaluationError,
    rules: rules.map((cidr) => ({ cidr, label: "", createdAt: 0 })),
  });
  const a = (t: string) => parseAddress(t)!;

  it("nothing to enforce without an enabled organization list", () => {
    assert.equal(compileAllowlists([]), undefined);
    assert.equal(compileAllowlists([list("", ["10.0.0.0/24"], false), list("k", ["10.0.0.0/24"])]), undefined);
    assert.ok(admits(undefined, "k", a("192.0.2.1")));
  });

  it("key rules override; empty key lists fall back; zero rules block; unknown address → onEvaluationError", () => {
    const c = compileAllowlists([list("", ["10.0.0.0/24"]), list("k", ["192.0.2.0/24"]), list("empty", [])])!;
    assert.ok(admits(c, "k", a("192.0.2.7")));
    assert.ok(!admits(c, "k", a("10.0.0.7")));
    assert.ok(admits(c, "empty", a("10.0.0.7")));
    assert.ok(admits(c, undefined, a("10.0.0.7")));
    assert.ok(!admits(c, undefined, a("192.0.2.7")));
    assert.ok(!admits(c, "k", undefined));
    assert.ok(!admits(compileAllowlists([list("", [])])!, undefined, a("10.0.0.1")));
    assert.ok(admits(compileAllowlists([list("", [], true, "ALLOW")])!, undefined, undefined));
  });
});

describe("network configuration", () => {
  it("SIGIL_TRUST_PROXY: off, hops, or proxy addresses/CIDRs", () => {
    assert.equal(parseTrustProxy("false"), false);
    assert.equal(parseTrustProxy("0"), false);
    assert.equal(parseTrustProxy("2"), 2);
    assert.deepEqual(parseTrustProxy("10.0.0.1, 192.168.0.0/16,::1"), ["10.0.0.1", "192.168.0.0/16", "::1"]);
    assert.throws(() => parseTrustProxy("10.0.0.300"), /SIGIL_TRUST_PROXY/);
    assert.throws(() => parseTrustProxy("33"), /at most 32 hops/);
    const hops = fastifyTrustProxy(2) as (a: string, i: number) => boolean;
    assert.deepEqual(
      [0, 1, 2].map((i) => hops("x", i)),
      [true, true, false],
    );
  });

  it("SIGIL_CORS_ORIGINS: exact origins only", () => {
    assert.deepEqual(parseCorsOrigins("https://app.example.com, http://localhost:3000"), [
      "https://app.example.com",
      "http://localhost:3000",
    ]);
    assert.throws(() => parseCorsOrigins("https://app.example.com/path"), /exact origin/);
    assert.throws(() => parseCorsOrigins("*"), /not an origin/);
    assert.throws(() => parseCorsOrigins("ftp://x.example.com"), /exact origin/);
  });

  it("rate limits: defaults, 0 switches one off; REDIS_URL is env-only", () => {
    const d = loadConfig({});
    assert.ok(d.rateLimitAddress > 0 && d.rateLimitCredential > 0 && d.rateLimitOrganization > 0);
    assert.equal(d.trustProxy, false);
    assert.deepEqual(d.corsOrigins, []);
    const c = loadConfig({ SIGIL_RATE_LIMIT_CREDENTIAL: "0", SIGIL_RATE_LIMIT_ADDRESS: "7", REDIS_URL: "redis://127.0.0.1:6379" });
    assert.equal(c.rateLimitCredential, 0);
    assert.equal(c.rateLimitAddress, 7);
    assert.equal(c.redisUrl, "redis://127.0.0.1:6379");
    assert.throws(() => loadConfig({}, ["--redis-url", "redis://x"]), /environment/);
    assert.throws(() => loadConfig({ SIGIL_RATE_LIMIT_ORGANIZATION: "-1" }), /integer/);
  });
});
