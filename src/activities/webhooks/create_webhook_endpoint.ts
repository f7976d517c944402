import { Type, type Static } from "@sinclair/typebox";
import { exhausted } from "../../errors.ts";
import {
  bumpWebhookVersion,
  EVENT_ACTIVITY_UPDATES,
  endpointView,
  MAX_ENDPOINTS_PER_ORGANIZATION,
  type WebhookEndpointRow,
} from "../../store/webhooks.ts";
import { newId } from "../../store/util.ts";
import { lockOrganization } from "../../store/locks.ts";
import { WebhookEndpoint } from "../../schemas/views.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { EndpointName, Subscription, Url, checkSubscriptions, checkUrl } from "./endpoint-fields.ts";

const Params = Type.Object({
  url: Url,
  name: EndpointName,
  /** Optional in the swagger; absent means ACTIVITY_UPDATES. */
  subscriptions: Type.Optional(
    Type.Array(Subscription, { minItems: 1, maxItems: 10, errorMessage: "subscriptions must hold 1 to 10 items" }),
  ),
});
type P = Static<typeof Params>;

async function execute(ctx: ExecuteContext, p: P) {
  const { tx, organization, now } = ctx;
  // The cap is count-then-insert: concurrent creators in this organization must count one
  // after the other, or each sees room for itself.
  await lockOrganization(tx, organization.id);
  const count = await tx
    .selectFrom("webhook_endpoints")
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .where("organization_id", "=", organization.id)
    .executeTakeFirstOrThrow();
  if (Number(count.n) >= MAX_ENDPOINTS_PER_ORGANIZATION) {
    throw exhausted(`organization ${organization.id} already has ${MAX_ENDPOINTS_PER_ORGANIZATION} webhook endpoints, the maximum`);
  }
  const row: WebhookEndpointRow = {
    id: newId(),
    organization_id: organization.id,
    url: p.url,
    name: p.name,
    is_active: 1,
    subscriptions: JSON.stringify(p.subscriptions ?? [{ eventType: EVENT_ACTIVITY_UPDATES }]),
    created_at: now,
    updated_at: now,
  };
  await tx.insertInto("webhook_endpoints").values(row).execute();
  await bumpWebhookVersion(tx);
  return { endpointId: row.id, webhookEndpoint: endpointView(row) };
}

const Result = Type.Object({ endpointId: Type.String(), webhookEndpoint: WebhookEndpoint });

export const createWebhookEndpoint = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT",
  resource: "WEBHOOK_ENDPOINT",
  action: "CREATE",
  kind: "CREATE_WEBHOOK_ENDPOINT",
  summary: "Create a webhook endpoint (https, public destination) subscribed to ACTIVITY_UPDATES.",
  params: Params,
  returns: Result,
  check(p) {
    checkSubscriptions(p.subscriptions);
  },
  // The URL against the configured policy (development may open loopback).
  admit: async (p, env) => checkUrl(p.url, "parameters.url", env.webhookUrls),
  execute,
});
