import { it } from "node:test";
import assert from "node:assert/strict";
import {
  assertIdempotent,
  completed,
  deliveriesFor,
  deliveryOf,
  failedDelivery,
  invalidRequest,
  notFound,
  LOOPBACK_WEBHOOKS,
  onSqlite,
  perEngine,
  precondition,
  type Json,
  newEndpoint,
} from "../helpers/inproc.ts";
import { redeliverWebhookDeliveries } from "../../src/activities/webhooks/redeliver_webhook_deliveries.ts";
import { updateWebhookEndpoint } from "../../src/activities/webhooks/update_webhook_endpoint.ts";

const OP = "redeliver_webhook_deliveries";
const TYPE = "ACTIVITY_TYPE_REDELIVER_WEBHOOK_DELIVERIES";
const MISSING = "00000000-0000-4000-8000-000000000000";

onSqlite("redeliver_webhook_deliveries", (h) => {
  const create = () => newEndpoint(h());

  it("an endpoint without failed deliveries redelivers nothing", async () => {
    assert.deepEqual(completed(await h().submit(OP, TYPE, { endpointId: await create() }), redeliverWebhookDeliveries), {
      deliveryIds: [],
    });
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { endpointId: await create() });
  });

  it("a paused endpoint is refused (400, FAILED_PRECONDITION)", async () => {
    const endpointId = await create();
    completed(
      await h().submit("update_webhook_endpoint", "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT", { endpointId, isActive: false }),
      updateWebhookEndpoint,
    );
    precondition(await h().submit(OP, TYPE, { endpointId }), /not active/);
  });

  it("an unknown endpoint or delivery, or another organization's endpoint, is 404", async () => {
    notFound(await h().submit(OP, TYPE, { endpointId: MISSING }), /no webhook endpoint/);
    notFound(await h().submit(OP, TYPE, { deliveryIds: [MISSING] }), /no webhook delivery/);
    notFound(await h().submit(OP, TYPE, { endpointId: await create() }, { as: await h().newOrg() }));
  });

  const refused: [string, Json, RegExp, string][] = [
    ["neither deliveryIds nor endpointId", {}, /either deliveryIds or endpointId/, "parameters"],
    ["both deliveryIds and endpointId", { deliveryIds: [MISSING], endpointId: MISSING }, /either deliveryIds or endpointId/, "parameters"],
    ["repeated delivery ids", { deliveryIds: [MISSING, MISSING] }, /distinct/, "parameters.deliveryIds"],
    ["an empty deliveryIds", { deliveryIds: [] }, /1 to 100/, "parameters.deliveryIds"],
    [
      "more than 100 delivery ids",
      { deliveryIds: Array.from({ length: 101 }, (_, i) => MISSING.slice(0, -3) + String(i).padStart(3, "0")) },
      /1 to 100/,
      "parameters.deliveryIds",
    ],
  ];
  for (const [what, params, message, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, params), message, [field]);
    });
  }
});

perEngine(
  "redeliver_webhook_deliveries, with the dispatcher running",
  (h) => {
    const d = deliveriesFor(h);

    it("puts a failed delivery back: the same event is delivered again, as a second attempt", async () => {
      const { endpointId, activityId, delivery: failed } = await failedDelivery(h(), d(), "again");
      d().answer(200);
      assert.deepEqual(completed(await h().submit(OP, TYPE, { deliveryIds: [failed.deliveryId] }), redeliverWebhookDeliveries), {
        deliveryIds: [failed.deliveryId],
      });
      const delivered = await deliveryOf(h(), endpointId, activityId, "WEBHOOK_DELIVERY_STATUS_DELIVERED");
      assert.equal(delivered.deliveryId, failed.deliveryId);
      assert.equal(delivered.eventId, failed.eventId);
      assert.deepEqual(
        delivered.attempts.map((a: Json) => a.httpStatus),
        [400, 200],
      );
    });

    it("by endpointId: every failed delivery of the endpoint", async () => {
      const { endpointId, delivery: failed } = await failedDelivery(h(), d(), "bulk");
      const { deliveryIds } = completed(await h().submit(OP, TYPE, { endpointId }), redeliverWebhookDeliveries);
      assert.ok(deliveryIds.includes(failed.deliveryId), JSON.stringify(deliveryIds));
    });
  },
  ["sqlite"],
  LOOPBACK_WEBHOOKS,
);
