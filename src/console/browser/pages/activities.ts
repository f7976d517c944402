/// <reference lib="dom" />
// #/org/<id>/activities?status=&type=&user=&after=&before=: the activities, newest first.
// Status and type are list_activities' own filters; user (submitted or voted on) and time are
// applied in the page to the rows read, since the query has no such filter (docs/console.md §5).
// Paged by the query's cursor: Next asks for the page after the last row read.
import { useState } from "preact/hooks";
import type { Json } from "../api.ts";
import { navigate, type PageProps } from "../page.ts";
import { ErrorBanner, fmtTime, h, Loading, orgHref, statusLabel, timeMs, typeLabel, useLoad, type VNode } from "../ui.ts";
import { ACTIVITY_STATUSES } from "../../../store/schema.ts";

/** The filter offers every status the store knows (one list: src/store/schema.ts). */
export const STATUSES = ACTIVITY_STATUSES;
const PAGE = 50;

/** A filter time: epoch ms, or anything Date.parse reads (the datetime-local field's value). */
function filterTime(v: string | null): number | undefined {
  if (!v) return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  return Number.isFinite(n) ? n : undefined;
}

/** The first vote is the submitter's stamp. */
export const submitterOf = (a: Json): Json | undefined => (a.votes as Json[] | undefined)?.[0];

export function ActivitiesPage(p: PageProps): VNode {
  const status = p.query.get("status") ?? "";
  const type = p.query.get("type") ?? "";
  const user = p.query.get("user") ?? "";
  const after = p.query.get("after") ?? "";
  const before = p.query.get("before") ?? "";
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const users = useLoad(() => p.api.query<{ users: Json[] }>("list_users", p.orgId).then((r) => r.users), [p.orgId]);
  const load = useLoad(async () => {
    const filters = { ...(status ? { filterByStatus: [status] } : {}), ...(type ? { filterByType: [type] } : {}) };
    const list = (paginationOptions: Json) =>
      p.api.query<{ activities: Json[] }>("list_activities", p.orgId, { ...filters, paginationOptions });
    const r = await list({ limit: String(PAGE), ...(cursor ? { after: cursor } : {}) });
    // A page of large activities ends before `limit` (docs/api.md §3.1): whether more follow, one more asked tells.
    const end = r.activities[r.activities.length - 1];
    const following =
      r.activities.length === PAGE || (end !== undefined && (await list({ limit: "1", after: end.id })).activities.length > 0);
    return { ...r, following };
  }, [p.orgId, status, type, cursor]);
  const set = (name: string, value: string) => {
    const q = new URLSearchParams(p.query);
    if (value) q.set(name, value);
    else q.delete(name);
    setCursors([]);
    const qs = q.toString();
    navigate(orgHref(p.orgId, `activities${qs ? `?${qs}` : ""}`));
  };
  const afterMs = filterTime(after);
  const beforeMs = filterTime(before);
  const read = load.data?.activities ?? [];
  const rows = read.filter((a) => {
    const t = timeMs(a.createdAt);
    if (afterMs !== undefined && !(t >= afterMs)) return false;
    if (beforeMs !== undefined && !(t < beforeMs)) return false;
    if (user && !(a.votes as Json[]).some((v) => v.userId === user)) return false;
    return true;
  });
  // Newest first: once a page ends before the "after" time, later pages hold nothing newer.
  const last = read[read.length - 1];
  const more = load.data?.following === true && !(afterMs !== undefined && last && timeMs(last.createdAt) < afterMs);
  const field = (label: string, el: VNode) => h("label", null, label, el);
  const onChange = (name: string) => (e: Event) => set(name, (e.currentTarget as HTMLInputElement | HTMLSelectElement).value);
  return h(
    "div",
    null,
    h("h1", null, "Activities"),
    h(
      "div",
      { class: "filters" },
      field(
        "Status",
        h(
          "select",
          { "data-testid": "activity-filter-status", value: status, onChange: onChange("status") },
          h("option", { value: "" }, "any"),
          STATUSES.map((s) => h("option", { key: s, value: s }, statusLabel(s))),
        ),
      ),
      field(
        "Type",
        h("input", { "data-testid": "activity-filter-type", placeholder: "ACTIVITY_TYPE_…", value: type, onChange: onChange("type") }),
      ),
      field(
        "User",
        h(
          "select",
          { "data-testid": "activity-filter-user", value: user, onChange: onChange("user") },
          h("option", { value: "" }, "anyone"),
          (users.data ?? []).map((u) => h("option", { key: u.userId, value: u.userId }, u.userName || u.userId)),
        ),
      ),
      field(
        "After",
        h("input", {
          "data-testid": "activity-filter-after",
          type: "datetime-local",
          value: toLocalInput(afterMs),
          onChange: (e: Event) => set("after", fromLocalInput((e.currentTarget as HTMLInputElement).value)),
        }),
      ),
      field(
        "Before",
        h("input", {
          "data-testid": "activity-filter-before",
          type: "datetime-local",
          value: toLocalInput(beforeMs),
          onChange: (e: Event) => set("before", fromLocalInput((e.currentTarget as HTMLInputElement).value)),
        }),
      ),
    ),
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
          ["Created", "Type", "Status", "Submitted by", "Id"].map((c) => h("th", { key: c }, c)),
        ),
      ),
      h(
        "tbody",
        null,
        rows.map((a) =>
          h(
            "tr",
            { key: a.id, "data-testid": "activity-row", "data-activity-id": a.id, "data-status": a.status },
            h("td", null, h("a", { href: orgHref(p.orgId, `activities/${encodeURIComponent(a.id)}`) }, fmtTime(a.createdAt))),
            h("td", null, typeLabel(a.type)),
            h("td", { class: "status" }, statusLabel(a.status)),
            h("td", null, submitterOf(a)?.user?.userName ?? ""),
            h("td", null, h("code", null, a.id)),
          ),
        ),
      ),
    ),
    !load.loading && rows.length === 0
      ? h("p", { class: "muted" }, read.length === 0 ? "No activity." : "No activity on this page matches the user and time filters.")
      : null,
    h(
      "div",
      { class: "pager" },
      cursors.length > 0
        ? h("button", { type: "button", class: "secondary", onClick: () => setCursors(cursors.slice(0, -1)) }, "Previous")
        : null,
      more && last
        ? h(
            "button",
            {
              type: "button",
              class: "secondary",
              "data-testid": "activities-next",
              onClick: () => setCursors([...cursors, String(last.id)]),
            },
            "Next",
          )
        : null,
    ),
  );
}

/** Epoch ms as a datetime-local field's value (local time, minutes). */
function toLocalInput(ms: number | undefined): string {
  if (ms === undefined) return "";
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

const fromLocalInput = (v: string): string => {
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? String(ms) : "";
};
