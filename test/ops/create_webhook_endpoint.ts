import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, exhausted, invalidRequest, onSqlite, perEngine, UUID, type Json } from "../helpers/inproc.ts";
import { createWebhookEndpoint } from "../../src/activities/webhooks/create_webhook_endpoint.ts";

const OP = "create_webhook_endpoint";
const TYPE = "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT";
const params = (over: Json = {}): Json => ({ url: "https://hooks.example.com/sigil", name: "hook", ...over });

onSqlite("create_webhook_endpoint", (h) => {
  it("creates an active endpoint subscribed to ACTIVITY_UPDATES by default; list_webhook_endpoints shows it", async () => {
    const r = completed(await h().submit(OP, TYPE, params()), createWebhookEndpoint);
    assert.match(r.endpointId, UUID);
    assert.equal(r.webhookEndpoint.endpointId, r.endpointId);
    assert.equal(r.webhookEndpoint.url, "https://hooks.example.com/sigil");
    assert.equal(r.webhookEndpoint.isActive, true);
    assert.deepEqual(r.webhookEndpoint.subscriptions, [{ eventType: "ACTIVITY_UPDATES" }]);
    const listed = (await h().query("list_webhook_endpoints")).json.webhookEndpoints;
    assert.ok(listed.some((e: Json) => e.endpointId === r.endpointId));
  });

  it("keeps explicit subscriptions with their filters", async () => {
    const subscriptions = [{ eventType: "ACTIVITY_UPDATES", filtersJson: '{"status":["ACTIVITY_STATUS_FAILED"]}' }];
    const r = completed(await h().submit(OP, TYPE, params({ subscriptions })), createWebhookEndpoint);
    assert.deepEqual(r.webhookEndpoint.subscriptions, subscriptions);
  });

  it("the same body twice is one endpoint", async () => {
    await assertIdempotent(h(), OP, TYPE, params({ name: "idem" }));
  });

  const refused: [string, Json, string][] = [
    ["plain http", params({ url: "http://hooks.example.com/x" }), "parameters.url"],
    ["a relative url", params({ url: "/hook" }), "parameters.url"],
    ["a loopback address", params({ url: "https://127.0.0.1/x" }), "parameters.url"],
    ["a private address", params({ url: "https://10.1.2.3/x" }), "parameters.url"],
    ["the metadata address", params({ url: "https://169.254.169.254/latest" }), "parameters.url"],
    ["localhost", params({ url: "https://localhost/x" }), "parameters.url"],
    ["user information", params({ url: "https://u:p@hooks.example.com/x" }), "parameters.url"],
    ["a url over 2048 characters", params({ url: "https://hooks.example.com/" + "a".repeat(2048) }), "parameters.url"],
    ["a blank name", params({ name: " " }), "parameters.name"],
    ["another event type", params({ subscriptions: [{ eventType: "BALANCE_UPDATES" }] }), "parameters.subscriptions[0].eventType"],
    [
      "filters that are not JSON",
      params({ subscriptions: [{ eventType: "ACTIVITY_UPDATES", filtersJson: "{" }] }),
      "parameters.subscriptions[0].filtersJson",
    ],
    ["an empty subscription list", params({ subscriptions: [] }), "parameters.subscriptions"],
  ];
  for (const [what, p, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, p), undefined, [field]);
    });
  }
});

perEngine("create_webhook_endpoint limits", (h) => {
  it("an organization holds at most 20 endpoints (429)", async () => {
    const org = await h().newOrg();
    for (let i = 0; i < 20; i++) completed(await h().submit(OP, TYPE, params({ name: `h${i}` }), { as: org }), createWebhookEndpoint);
    exhausted(await h().submit(OP, TYPE, params({ name: "one too many" }), { as: org }), /20 webhook endpoints/);
    assert.equal((await h().query("list_webhook_endpoints", {}, { as: org })).json.webhookEndpoints.length, 20);
  });
});
