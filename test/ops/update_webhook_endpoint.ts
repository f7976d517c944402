import { it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, invalidRequest, notFound, onSqlite, newEndpoint } from "../helpers/inproc.ts";
import { updateWebhookEndpoint } from "../../src/activities/webhooks/update_webhook_endpoint.ts";

const OP = "update_webhook_endpoint";
const TYPE = "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT";

onSqlite("update_webhook_endpoint", (h) => {
  const create = () => newEndpoint(h());

  it("changes url and name, keeps what is absent, and answers the endpoint as it now is", async () => {
    const endpointId = await create();
    const r = completed(await h().submit(OP, TYPE, { endpointId, url: "https://b.example.com/h" }), updateWebhookEndpoint);
    assert.equal(r.endpointId, endpointId);
    assert.equal(r.webhookEndpoint.url, "https://b.example.com/h");
    assert.equal(r.webhookEndpoint.name, "a");
    assert.equal(r.webhookEndpoint.isActive, true);
  });

  it("isActive false pauses the endpoint, true re-enables it", async () => {
    const endpointId = await create();
    for (const isActive of [false, true]) {
      const r = completed(await h().submit(OP, TYPE, { endpointId, isActive }), updateWebhookEndpoint);
      assert.equal(r.webhookEndpoint.isActive, isActive);
      const listed = (await h().query("list_webhook_endpoints")).json.webhookEndpoints.find(
        (e: { endpointId: string }) => e.endpointId === endpointId,
      );
      assert.equal(listed.isActive, isActive);
    }
  });

  it("the same body twice is one activity", async () => {
    await assertIdempotent(h(), OP, TYPE, { endpointId: await create(), name: "idem" });
  });

  it("an unknown endpoint, or another organization's, is 404", async () => {
    notFound(await h().submit(OP, TYPE, { endpointId: "00000000-0000-4000-8000-000000000000", name: "x" }), /no webhook endpoint/);
    notFound(await h().submit(OP, TYPE, { endpointId: await create(), name: "x" }, { as: await h().newOrg() }));
  });

  for (const [what, params, field] of [
    ["a url that is not https", { url: "http://a.example.com/h" }, "parameters.url"],
    ["a private address", { url: "https://192.168.1.1/h" }, "parameters.url"],
    ["a blank name", { name: "" }, "parameters.name"],
    ["a non-boolean isActive", { isActive: "no" }, "parameters.isActive"],
  ] as const) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, TYPE, { endpointId: await create(), ...params }), undefined, [field]);
    });
  }
});
