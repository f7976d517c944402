import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, onSqlite } from "../helpers/inproc.ts";
import { createWebhookEndpoint } from "../../src/activities/webhooks/create_webhook_endpoint.ts";

onSqlite("list_webhook_endpoints", (h) => {
  it("lists the organization's endpoints oldest first, as the create answers showed them", async () => {
    const org = await h().newOrg();
    assert.deepEqual((await h().query("list_webhook_endpoints", {}, { as: org })).json, { webhookEndpoints: [] });
    const created = [];
    for (const name of ["b", "a"]) {
      created.push(
        completed(
          await h().submit(
            "create_webhook_endpoint",
            "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT",
            { url: `https://${name}.example.com/h`, name },
            { as: org },
          ),
          createWebhookEndpoint,
        ).webhookEndpoint,
      );
    }
    assert.deepEqual((await h().query("list_webhook_endpoints", {}, { as: org })).json.webhookEndpoints, created);
    assert.deepEqual((await h().query("list_webhook_endpoints")).json.webhookEndpoints, []);
  });
});
