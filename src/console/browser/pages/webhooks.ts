/// <reference lib="dom" />
// #/org/<id>/webhooks: webhook endpoints (list_webhook_endpoints) and, for one, its deliveries
// with their attempts (list_webhook_deliveries), newest first; a finished delivery can be sent
// again, or every failed one of an endpoint (redeliver_webhook_deliveries, stamped by the user).
import { useState } from "preact/hooks";
import type { Json } from "../api.ts";
import type { PageProps } from "../page.ts";
import { ErrorBanner, fmtTime, h, Loading, orgHref, ReadOnlyNote, shortEnum, statusLabel, useLoad, type VNode } from "../ui.ts";

const PAGE = 25;

function Deliveries(props: { p: PageProps; endpoint: Json }): VNode {
  const { p, endpoint } = props;
  const endpointId = String(endpoint.endpointId);
  const load = useLoad(
    () =>
      p.api
        .query<{ webhookDeliveries: Json[] }>("list_webhook_deliveries", p.orgId, {
          endpointId,
          paginationOptions: { limit: String(PAGE) },
        })
        .then((r) => r.webhookDeliveries),
    [p.orgId, endpointId],
  );
  const [result, setResult] = useState<Json | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const redeliver = async (params: Json) => {
    setError(undefined);
    setResult(undefined);
    try {
      setResult(await p.api.submit("redeliver_webhook_deliveries", "ACTIVITY_TYPE_REDELIVER_WEBHOOK_DELIVERIES", p.orgId, params));
      load.reload();
    } catch (err) {
      setError(err);
    }
  };
  const rows = load.data ?? [];
  return h(
    "div",
    { "data-testid": "webhook-deliveries", "data-endpoint-id": endpointId },
    h(ErrorBanner, { error: load.error ?? error }),
    result
      ? h("p", { "data-testid": "redeliver-result", "data-status": result.status }, `Redelivery: ${statusLabel(String(result.status))}`)
      : null,
    p.readOnly || !endpoint.isActive
      ? null
      : h(
          "div",
          { class: "actions" },
          h(
            "button",
            { type: "button", class: "secondary", "data-testid": "redeliver-failed", onClick: () => void redeliver({ endpointId }) },
            "Redeliver every failed delivery",
          ),
        ),
    load.loading ? h(Loading, null) : null,
    rows.length === 0 && !load.loading
      ? h("p", { class: "muted" }, "No delivery.")
      : h(
          "table",
          null,
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ["Created", "Event", "Status", "Attempts", "Last answer", ""].map((c, i) => h("th", { key: i }, c)),
            ),
          ),
          h(
            "tbody",
            null,
            rows.map((d) =>
              h(
                "tr",
                { key: d.deliveryId, "data-testid": "webhook-delivery-row", "data-delivery-id": d.deliveryId, "data-status": d.status },
                h("td", null, fmtTime(d.createdAt)),
                h(
                  "td",
                  null,
                  String(d.eventType ?? ""),
                  d.activityId
                    ? h("div", null, h("a", { href: orgHref(p.orgId, `activities/${encodeURIComponent(d.activityId)}`) }, "activity"))
                    : null,
                ),
                h("td", null, shortEnum(String(d.status), "WEBHOOK_DELIVERY_STATUS_")),
                h(
                  "td",
                  null,
                  String(d.attemptCount),
                  (d.attempts as Json[]).length > 0
                    ? h(
                        "div",
                        { class: "muted" },
                        (d.attempts as Json[])
                          .map((a) => `#${a.attempt} ${fmtTime(a.startedAt)} ${a.httpStatus ?? a.error ?? ""} (${a.durationMs} ms)`)
                          .join("; "),
                      )
                    : null,
                ),
                h("td", null, d.lastHttpStatus !== undefined ? `HTTP ${d.lastHttpStatus}` : String(d.lastError ?? "")),
                h(
                  "td",
                  null,
                  p.readOnly || d.status === "WEBHOOK_DELIVERY_STATUS_PENDING" || !endpoint.isActive
                    ? null
                    : h(
                        "button",
                        {
                          type: "button",
                          class: "secondary",
                          "data-testid": "redeliver-button",
                          onClick: () => void redeliver({ deliveryIds: [d.deliveryId] }),
                        },
                        "Redeliver",
                      ),
                ),
              ),
            ),
          ),
        ),
  );
}

export function WebhooksPage(p: PageProps): VNode {
  const load = useLoad(
    () => p.api.query<{ webhookEndpoints: Json[] }>("list_webhook_endpoints", p.orgId).then((r) => r.webhookEndpoints),
    [p.orgId],
  );
  const [open, setOpen] = useState<string | undefined>(undefined);
  const rows = load.data ?? [];
  return h(
    "div",
    null,
    h("h1", null, "Webhooks"),
    h(ReadOnlyNote, { readOnly: p.readOnly }),
    h(ErrorBanner, { error: load.error }),
    load.loading ? h(Loading, null) : null,
    h(
      "table",
      null,
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Endpoint", "URL", "Subscriptions", "State", ""].map((c, i) => h("th", { key: i }, c)),
        ),
      ),
      h(
        "tbody",
        null,
        rows.flatMap((e) => [
          h(
            "tr",
            { key: e.endpointId, "data-testid": "webhook-row", "data-endpoint-id": e.endpointId },
            h("td", null, e.name, h("div", { class: "muted" }, h("code", null, e.endpointId))),
            h("td", null, h("code", null, e.url)),
            h("td", null, (e.subscriptions as Json[]).map((s) => s.eventType).join(", ")),
            h("td", null, e.isActive ? "active" : `disabled${e.disabledReason ? `: ${String(e.disabledReason)}` : ""}`),
            h(
              "td",
              null,
              h(
                "button",
                {
                  type: "button",
                  class: "secondary",
                  "data-testid": "webhook-deliveries-button",
                  onClick: () => setOpen(open === e.endpointId ? undefined : e.endpointId),
                },
                open === e.endpointId ? "Hide deliveries" : "Deliveries",
              ),
            ),
          ),
          open === e.endpointId
            ? h("tr", { key: `${e.endpointId}-deliveries` }, h("td", { colSpan: 5 }, h(Deliveries, { p, endpoint: e })))
            : null,
        ]),
      ),
    ),
    !load.loading && rows.length === 0 && !load.error ? h("p", { class: "muted" }, "No webhook endpoint.") : null,
  );
}
