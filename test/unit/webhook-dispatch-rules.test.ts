// Pure rules of webhook delivery: where a delivery may go, what an answer means, and how
// long to wait before the next attempt.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  addressProblem,
  dialAddress,
  embeddedIPv4,
  STRICT_WEBHOOK_URLS,
  urlProblem,
  webhookUrlPolicy,
} from "../../src/webhooks/url-policy.ts";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { generateKeyPairSync } from "node:crypto";
import { attemptDelivery, classify } from "../../src/webhooks/deliver.ts";
import { effectiveSchedule } from "../../src/webhooks/dispatcher.ts";
import { DEFAULT_RETRY_SCHEDULE_MS, parseDuration, parseSchedule, retryDelayMs } from "../../src/webhooks/retry-schedule.ts";

// The production policy, and the development one (SIGIL_WEBHOOKS_ALLOW_LOOPBACK): values
// passed to each check, never a setting of the module.
const strict = STRICT_WEBHOOK_URLS;
const loopback = webhookUrlPolicy({ allowLoopback: true });

describe("webhook URL policy", () => {
  it("accepts https to a public host or address", () => {
    for (const u of ["https://hooks.example.com/sigil", "https://93.184.216.34/x", "https://[2606:4700::1111]/x"]) {
      assert.equal(urlProblem(u, strict), undefined, u);
    }
  });

  it("refuses other schemes, user info, bad hosts and internal destinations", () => {
    const refused: [string, RegExp][] = [
      ["http://hooks.example.com/", /https/],
      ["ftp://hooks.example.com/", /https/],
      ["not a url", /absolute URL/],
      ["https://user:pw@hooks.example.com/", /user information/],
      ["https://localhost/", /internal host name/],
      ["https://metadata.google.internal/", /internal host name/],
      ["https://printer.local/", /internal host name/],
      ["https://127.0.0.1/", /loopback, private/],
      ["https://10.1.2.3/", /loopback, private/],
      ["https://172.20.0.1/", /loopback, private/],
      ["https://192.168.1.1/", /loopback, private/],
      ["https://169.254.169.254/latest/meta-data", /loopback, private/],
      ["https://100.64.0.1/", /loopback, private/],
      ["https://[::1]/", /loopback, private/],
      ["https://[fe80::1]/", /loopback, private/],
      ["https://[fd00::1]/", /loopback, private/],
      ["https://[::ffff:10.0.0.1]/", /loopback, private/],
      ["https://0.0.0.0/", /loopback, private/],
    ];
    for (const [u, why] of refused) assert.match(urlProblem(u, strict) ?? "accepted", why, u);
  });

  it("the development setting opens loopback (http or https) and nothing else", () => {
    for (const u of ["http://127.0.0.1:8080/x", "https://127.0.0.1/x", "http://[::1]:9/x", "http://localhost:3000/"]) {
      assert.equal(urlProblem(u, loopback), undefined, u);
    }
    assert.match(urlProblem("http://hooks.example.com/", loopback) ?? "", /https/);
    assert.match(urlProblem("https://10.0.0.1/", loopback) ?? "", /private/);
    assert.equal(addressProblem("127.0.0.1", "http:", loopback), undefined);
    assert.match(addressProblem("192.168.0.10", "https:", loopback) ?? "", /private/);
  });
});

describe("delivery outcomes", () => {
  it("2xx delivered; 5xx and network errors retried; 3xx, 4xx and 429 final", () => {
    assert.equal(classify({ status: 200 }), "delivered");
    assert.equal(classify({ status: 204 }), "delivered");
    assert.equal(classify({ status: 500 }), "retry");
    assert.equal(classify({ status: 503 }), "retry");
    assert.equal(classify({ error: "ECONNREFUSED" }), "retry");
    for (const status of [301, 302, 400, 401, 404, 410, 429]) assert.equal(classify({ status }), "failed", String(status));
  });

  it("a 2xx whose answer was cut short (deadline, reset) is retried, not taken as delivered", () => {
    assert.equal(classify({ status: 200, error: "no complete answer within the 2000 ms deadline" }), "retry");
    assert.equal(classify({ status: 503, error: "aborted" }), "retry");
    assert.equal(classify({ status: 410, error: "aborted" }), "failed");
  });
});

describe("retry schedule", () => {
  it("the default spans more than 24 hours: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
    assert.deepEqual(DEFAULT_RETRY_SCHEDULE_MS, [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    const span = DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    assert.ok(span >= 24 * 3_600_000, `span ${span} ms`);
    // Even with the most jitter taken off, more than a day.
    assert.ok(span * 0.8 >= 22 * 3_600_000);
  });

  it("the delay after n attempts is the schedule's entry n, jittered to 80–120 %; undefined once spent", () => {
    const s = [0, 1000, 60_000];
    assert.equal(
      retryDelayMs(s, 1, () => 0.5),
      1000,
    );
    assert.equal(
      retryDelayMs(s, 1, () => 0),
      800,
    );
    assert.equal(
      retryDelayMs(s, 1, () => 1),
      1200,
    );
    assert.equal(
      retryDelayMs(s, 2, () => 0.5),
      60_000,
    );
    assert.equal(
      retryDelayMs(s, 3, () => 0.5),
      undefined,
      "three attempts: spent",
    );
  });

  it("maxAttempts cuts the schedule short or repeats its last delay", () => {
    assert.deepEqual(effectiveSchedule([0, 5, 10]), [0, 5, 10]);
    assert.deepEqual(effectiveSchedule([0, 5, 10], 1), [0]);
    assert.deepEqual(effectiveSchedule([0, 5, 10], 5), [0, 5, 10, 10, 10]);
  });

  it("durations and schedules parse with units, and refuse what they cannot read", () => {
    assert.equal(parseDuration("250ms", "X"), 250);
    assert.equal(parseDuration("5s", "X"), 5000);
    assert.equal(parseDuration("30m", "X"), 1_800_000);
    assert.equal(parseDuration("2h", "X"), 7_200_000);
    assert.equal(parseDuration("5d", "X"), 432_000_000);
    assert.equal(parseDuration("40", "X"), 40);
    assert.deepEqual(parseSchedule("0, 5s,5m", "X"), [0, 5000, 300_000]);
    for (const bad of ["", "5 s", "-1s", "1.5s", "5w", "ten"]) assert.throws(() => parseDuration(bad, "X"), /X: .* is not a duration/, bad);
    assert.throws(() => parseSchedule("0,8d", "X"), /at most 7 days/);
    assert.throws(() => parseSchedule(Array(51).fill("1s").join(","), "X"), /1 to 50/);
  });
});

/**
 * IPv6 spellings that reach an IPv4 address (the stack, a translator or a tunnel carries it):
 * judged as the IPv4 address they carry, or refused outright when what they carry cannot be
 * judged. Each row: address, what it carries, verdict.
 */
const EMBEDDED: [string, string, "refused" | "allowed"][] = [
  ["::127.0.0.1", "IPv4-compatible ::/96 → 127.0.0.1", "refused"],
  ["::7f00:1", "IPv4-compatible, hex → 127.0.0.1", "refused"],
  ["::10.1.2.3", "IPv4-compatible → 10.1.2.3", "refused"],
  ["::ffff:7f00:1", "IPv4-mapped, hex → 127.0.0.1", "refused"],
  ["::ffff:a9fe:a9fe", "IPv4-mapped → 169.254.169.254", "refused"],
  ["::ffff:0:7f00:1", "SIIT ::ffff:0:0/96 → 127.0.0.1", "refused"],
  ["::ffff:0:192.168.1.1", "SIIT → 192.168.1.1", "refused"],
  ["2002:7f00:1::", "6to4 2002::/16 → 127.0.0.1", "refused"],
  ["2002:a00:1::1", "6to4 → 10.0.0.1", "refused"],
  ["2002:c0a8:101:1::1", "6to4 → 192.168.1.1", "refused"],
  ["64:ff9b::7f00:1", "NAT64 64:ff9b::/96 → 127.0.0.1", "refused"],
  ["64:ff9b::10.0.0.1", "NAT64 → 10.0.0.1", "refused"],
  ["64:ff9b::a9fe:a9fe", "NAT64 → 169.254.169.254", "refused"],
  ["64:ff9b:1::a00:1", "local-use NAT64 64:ff9b:1::/48", "refused"],
  ["64:ff9b:1:ffff::808:808", "local-use NAT64, whatever it carries", "refused"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo 2001::/32", "refused"],
  ["2001::1", "Teredo", "refused"],
  ["fec0::1", "site-local (deprecated)", "refused"],
  // Public IPv4 behind a translator is a legitimate destination.
  ["64:ff9b::808:808", "NAT64 → 8.8.8.8", "allowed"],
  ["2002:808:808::1", "6to4 → 8.8.8.8", "allowed"],
  ["::ffff:5db8:d822", "IPv4-mapped → 93.184.216.34", "allowed"],
  ["2606:4700::1111", "plain public IPv6", "allowed"],
  ["2001:4860:4860::8888", "2001:4860::/32 is not Teredo", "allowed"],
];

describe("webhook URL policy: IPv6 forms that carry an IPv4 address", () => {
  it("decodes the IPv4 address each form carries", () => {
    assert.deepEqual(embeddedIPv4("::7f00:1"), { ipv4: "127.0.0.1", form: "IPv4-compatible" });
    assert.deepEqual(embeddedIPv4("::ffff:0:7f00:1"), { ipv4: "127.0.0.1", form: "IPv4-translated" });
    assert.deepEqual(embeddedIPv4("2002:c0a8:101::"), { ipv4: "192.168.1.1", form: "6to4" });
    assert.deepEqual(embeddedIPv4("64:ff9b::a00:1"), { ipv4: "10.0.0.1", form: "NAT64" });
    assert.ok("refuse" in (embeddedIPv4("2001::1") ?? {}));
    assert.equal(embeddedIPv4("::1"), undefined, "::1 is IPv6 loopback itself");
    assert.equal(embeddedIPv4("2606:4700::1111"), undefined);
  });

  it("at write time (create/update_webhook_endpoint's URL check)", () => {
    for (const [address, what, verdict] of EMBEDDED) {
      const problem = urlProblem(`https://[${address}]/hook`, strict);
      if (verdict === "refused") assert.match(problem ?? "accepted", /loopback, private|refused/, `${address} (${what})`);
      else assert.equal(problem, undefined, `${address} (${what})`);
    }
  });

  it("at write time with the development loopback setting: still refused (only ::1 and 127/8 open up)", () => {
    for (const [address, what, verdict] of EMBEDDED) {
      if (verdict !== "refused" || (address.startsWith("::ffff:") && !address.startsWith("::ffff:0:"))) continue;
      assert.match(
        urlProblem(`http://[${address}]:8080/hook`, loopback) ?? "accepted",
        /loopback, private|refused/,
        `${address} (${what})`,
      );
    }
  });

  it("at dial time: a literal address, and a name that resolves to one of these forms", async () => {
    for (const [address, what, verdict] of EMBEDDED) {
      const literal = dialAddress(new URL(`https://[${address}]/hook`), strict);
      const resolved = dialAddress(new URL("https://hooks.example.com/hook"), strict, async () => [{ address, family: 6 }]);
      // A name resolving to a safe address and to an unsafe one is refused as a whole.
      const mixed = dialAddress(new URL("https://hooks.example.com/hook"), strict, async () => [
        { address: "2606:4700::1111", family: 6 },
        { address, family: 6 },
      ]);
      if (verdict === "refused") {
        for (const [how, p] of [
          ["literal", literal],
          ["resolved", resolved],
          ["mixed", mixed],
        ] as const) {
          await assert.rejects(p, /refusing to deliver to .*(loopback, private|refused)/, `${how} ${address} (${what})`);
        }
      } else {
        assert.deepEqual(await literal, { address, family: 6 }, `${address} (${what})`);
        assert.deepEqual(await resolved, { address, family: 6 }, `${address} (${what})`);
        assert.equal((await mixed).address, "2606:4700::1111");
      }
    }
  });
});

describe("delivery attempt deadline", () => {
  /** A receiver on 127.0.0.1 that answers as `handler` says. */
  async function receiver(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
    const server = http.createServer(handler);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
      close: () => {
        server.closeAllConnections();
        return new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  const key = { id: "whk_test", privateKey: generateKeyPairSync("ed25519").privateKey };

  async function attempt(url: string, deadlineMs: number) {
    const started = Date.now();
    const a = await attemptDelivery({
      url,
      eventId: "e",
      eventType: "ACTIVITY_UPDATES",
      organizationId: "o",
      body: Buffer.from("{}"),
      key,
      deadlineAt: started + deadlineMs,
      now: started,
      // The receivers listen on loopback: the development policy.
      urls: loopback,
    });
    return { a, took: Date.now() - started };
  }

  it("is total: an answer trickled a byte at a time (never idle) is cut at the deadline, and retried", async () => {
    const r = await receiver((req, res) => {
      req.resume();
      res.writeHead(200);
      const drip = setInterval(() => res.write("."), 50);
      res.on("close", () => clearInterval(drip));
    });
    try {
      const { a, took } = await attempt(r.url, 400);
      assert.equal(a.status, 200);
      assert.match(a.error ?? "", /deadline/);
      assert.ok(took >= 350 && took < 900, `took ${took} ms`);
      assert.equal(classify(a), "retry");
    } finally {
      await r.close();
    }
  });

  it("covers waiting for the headers too", async () => {
    const r = await receiver((req) => req.resume()); // never answers
    try {
      const { a, took } = await attempt(r.url, 300);
      assert.equal(a.status, undefined);
      assert.match(a.error ?? "", /deadline/);
      assert.ok(took >= 250 && took < 800, `took ${took} ms`);
    } finally {
      await r.close();
    }
  });

  it("a complete answer within the deadline is delivered; a deadline already past makes no request", async () => {
    let requests = 0;
    const r = await receiver((req, res) => {
      requests++;
      req.resume();
      res.writeHead(204).end();
    });
    try {
      const ok = await attempt(r.url, 2000);
      assert.deepEqual(ok.a, { status: 204 });
      assert.equal(classify(ok.a), "delivered");
      const late = await attempt(r.url, -1);
      assert.match(late.a.error ?? "", /deadline passed/);
      assert.equal(requests, 1);
    } finally {
      await r.close();
    }
  });
});
