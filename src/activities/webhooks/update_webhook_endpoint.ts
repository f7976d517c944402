import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { bumpWebhookVersion, cancelPendingDeliveries, endpointView, findEndpoint } from "../../store/webhooks.ts";
import { WebhookEndpoint } from "../../schemas/views.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { EndpointName, Url, checkUrl } from "./endpoint-fields.ts";

const Params = Type.Object({
  endpointId: Id("webhook endpoint"),
  url: Type.Optional(Url),
  name: Type.Optional(EndpointName),
  isActive: Type.Optional(Type.Boolean()),
});
type P = Static<typeof Params>;

async function execute(ctx: ExecuteContext, p: P) {
  const { tx, organization, now } = ctx;
  const current = await findEndpoint(tx, organization.id, p.endpointId);
  if (!current) throw notFound(`no webhook endpoint ${p.endpointId} in organization ${organization.id}`);
  // Setting isActive either way takes over from an automatic disable: its reason, and the
  // failure streak that led to it, are cleared (a re-enabled endpoint gets the full time again).
  const health = p.isActive === undefined ? {} : { disabled_reason: null, disabled_at: null, failing_since: null };
  const next = {
    ...current,
    url: p.url ?? current.url,
    name: p.name ?? current.name,
    is_active: p.isActive === undefined ? current.is_active : p.isActive ? 1 : 0,
    ...health,
    updated_at: now,
  };
  await tx
    .updateTable("webhook_endpoints")
    .set({ url: next.url, name: next.name, is_active: next.is_active, ...health, updated_at: now })
    .where("id", "=", current.id)
    .execute();
  // Pausing stops what was still pending; nothing queued while paused is sent later.
  if (next.is_active === 0) await cancelPendingDeliveries(tx, current.id, now);
  await bumpWebhookVersion(tx);
  return { endpointId: current.id, webhookEndpoint: endpointView(next) };
}

const Result = Type.Object({ endpointId: Type.String(), webhookEndpoint: WebhookEndpoint });

export const updateWebhookEndpoint = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT",
  resource: "WEBHOOK_ENDPOINT",
  action: "UPDATE",
  kind: "UPDATE_WEBHOOK_ENDPOINT",
  summary:
    "Update a webhook endpoint's url, name or isActive (false pauses it and cancels pending deliveries; true re-enables it, also after the service disabled it for failing).",
  params: Params,
  returns: Result,
  policyParams: (p) => ({ endpoint_id: p.endpointId }),
  admit: async (p, env) => checkUrl(p.url, "parameters.url", env.webhookUrls),
  execute,
});
