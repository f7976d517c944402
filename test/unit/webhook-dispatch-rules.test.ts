// Pure rules of webhook delivery: where a delivery may go, what an answer means, and how
// long to wait before the next attempt.
import { describe, it, afterEach } from "node:test";
import assert from "node:assert/strict";
import { addressProblem, configureWebhookUrls, urlProblem } from "../../src/webhooks/url-policy.ts";
import { classify } from "../../src/webhooks/deliver.ts";
import { backoffMs } from "../../src/webhooks/dispatcher.ts";

describe("webhook URL policy", () => {
  afterEach(() => configureWebhookUrls({ allowLoopback: false }));

  it("accepts https to a public host or address", () => {
    for (const u of ["https://hooks.example.com/sigil", "https://93.184.216.34/x", "https://[2606:4700::1111]/x"]) {
      assert.equal(urlProblem(u), undefined, u);
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
    for (const [u, why] of refused) assert.match(urlProblem(u) ?? "accepted", why, u);
  });

  it("the development setting opens loopback (http or https) and nothing else", () => {
    configureWebhookUrls({ allowLoopback: true });
    for (const u of ["http://127.0.0.1:8080/x", "https://127.0.0.1/x", "http://[::1]:9/x", "http://localhost:3000/"]) {
      assert.equal(urlProblem(u), undefined, u);
    }
    assert.match(urlProblem("http://hooks.example.com/") ?? "", /https/);
    assert.match(urlProblem("https://10.0.0.1/") ?? "", /private/);
    assert.equal(addressProblem("127.0.0.1", "http:"), undefined);
    assert.match(addressProblem("192.168.0.10", "https:") ?? "", /private/);
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

  it("backoff doubles from the base, is capped, and jitters between 50 and 100 %", () => {
    assert.equal(backoffMs(1, 1000, 300_000, () => 1), 1000);
    assert.equal(backoffMs(2, 1000, 300_000, () => 1), 2000);
    assert.equal(backoffMs(4, 1000, 300_000, () => 1), 8000);
    assert.equal(backoffMs(4, 1000, 300_000, () => 0), 4000);
    assert.equal(backoffMs(20, 1000, 300_000, () => 1), 300_000);
  });
});
