import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, invalidRequest, notFound, onSqlite, newEndpoint } from "../helpers/inproc.ts";
import { deleteWebhookEndpoint } from "../../src/activities/webhooks/delete_webhook_endpoint.ts";

const OP = "delete_webhook_endpoint";
const TYPE = "ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT";

onSqlite("delete_webhook_endpoint", (h) => {
  const create = () => newEndpoint(h());
  const listed = async () =>
    (await h().query("list_webhook_endpoints")).json.webhookEndpoints.map((e: { endpointId: string }) => e.endpointId);

  it("deletes the endpoint", async () => {
    const endpointId = await create();
    assert.deepEqual(completed(await h().submit(OP, TYPE, { endpointId }), deleteWebhookEndpoint), { endpointId });
    assert.ok(!(await listed()).includes(endpointId));
    notFound(await h().submit(OP, TYPE, { endpointId }));
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { endpointId: await create() });
  });

  it("another organization's endpoint is 404 and stays", async () => {
    const endpointId = await create();
    notFound(await h().submit(OP, TYPE, { endpointId }, { as: await h().newOrg() }), /no webhook endpoint/);
    assert.ok((await listed()).includes(endpointId));
  });

  it("a malformed id is 400", async () => {
    invalidRequest(await h().submit(OP, TYPE, { endpointId: "x" }), /webhook endpoint id/, ["parameters.endpointId"]);
  });
});
