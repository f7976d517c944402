import { it } from "node:test";
import assert from "node:assert/strict";
import {
  completed,
  deliveriesFor,
  failedDelivery,
  invalidRequest,
  notFound,
  LOOPBACK_WEBHOOKS,
  onSqlite,
  perEngine,
  UUID,
  type Json,
} from "../helpers/inproc.ts";
import { createWebhookEndpoint } from "../../src/activities/webhooks/create_webhook_endpoint.ts";

onSqlite("list_webhook_deliveries", (h) => {
  it("answers an empty list for an endpoint nothing was delivered to, with every filter", async () => {
    const { endpointId } = completed(
      await h().submit("create_webhook_endpoint", "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT", { url: "https://a.example.com/h", name: "a" }),
      createWebhookEndpoint,
    );
    for (const body of [
      {},
      { endpointId },
      { filterByStatus: ["WEBHOOK_DELIVERY_STATUS_FAILED"] },
      { eventId: "00000000-0000-4000-8000-000000000000" },
      { paginationOptions: { limit: "100" } },
    ]) {
      const res = await h().query("list_webhook_deliveries", body);
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.deepEqual(res.json, { webhookDeliveries: [] });
    }
  });

  it("an unknown endpoint, or another organization's, is 404", async () => {
    notFound(await h().query("list_webhook_deliveries", { endpointId: "00000000-0000-4000-8000-000000000000" }), /no webhook endpoint/);
    const { endpointId } = completed(
      await h().submit("create_webhook_endpoint", "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT", { url: "https://b.example.com/h", name: "b" }),
      createWebhookEndpoint,
    );
    notFound(await h().query("list_webhook_deliveries", { endpointId }, { as: await h().newOrg() }));
  });

  const refused: [string, Json, string][] = [
    ["an unknown status", { filterByStatus: ["FAILED"] }, "filterByStatus[0]"],
    ["more than 4 statuses", { filterByStatus: Array(5).fill("WEBHOOK_DELIVERY_STATUS_FAILED") }, "filterByStatus"],
    ["a malformed endpoint id", { endpointId: "e" }, "endpointId"],
    ["a malformed event id", { eventId: "e" }, "eventId"],
    ["a limit of 0", { paginationOptions: { limit: "0" } }, "paginationOptions.limit"],
  ];
  for (const [what, body, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().query("list_webhook_deliveries", body), undefined, [field]);
    });
  }
});

perEngine(
  "list_webhook_deliveries, with the dispatcher running",
  (h) => {
    const d = deliveriesFor(h);

    it("lists a delivery with its attempts; endpointId, filterByStatus and eventId narrow it", async () => {
      const { endpointId, delivery: failed } = await failedDelivery(h(), d(), "listed");
      assert.match(failed.deliveryId, UUID);
      assert.match(failed.eventId, UUID);
      assert.equal(failed.endpointId, endpointId);
      assert.equal(failed.eventType, "ACTIVITY_UPDATES");
      assert.equal(failed.eventOrganizationId, h().root.organizationId);
      assert.equal(failed.attemptCount, 1);
      assert.equal(failed.lastHttpStatus, 400);
      assert.deepEqual(
        failed.attempts.map((a: Json) => [a.attempt, a.httpStatus]),
        [[1, 400]],
      );
      assert.ok(d().received() >= 1);
      const byEvent = (await h().query("list_webhook_deliveries", { eventId: failed.eventId })).json.webhookDeliveries;
      assert.deepEqual(
        byEvent.map((x: Json) => x.deliveryId),
        [failed.deliveryId],
      );
      const delivered = (
        await h().query("list_webhook_deliveries", { eventId: failed.eventId, filterByStatus: ["WEBHOOK_DELIVERY_STATUS_DELIVERED"] })
      ).json.webhookDeliveries;
      assert.deepEqual(delivered, []);
    });
  },
  ["sqlite"],
  LOOPBACK_WEBHOOKS,
);
