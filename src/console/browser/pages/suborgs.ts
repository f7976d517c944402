/// <reference lib="dom" />
// #/org/<id>/suborgs?by=&q=: the direct sub-organizations (list_suborgs with its filters), paged;
// each opens read-only (docs/console.md §5).
import { useState } from "preact/hooks";
import type { PageProps } from "../page.ts";
import { navigate } from "../page.ts";
import { ErrorBanner, h, Loading, orgHref, useLoad, type VNode } from "../ui.ts";

const FILTERS = [
  "NAME",
  "USERNAME",
  "EMAIL",
  "PHONE_NUMBER",
  "PUBLIC_KEY",
  "CREDENTIAL_ID",
  "WALLET_ACCOUNT_ADDRESS",
  "OIDC_TOKEN",
] as const;
const PAGE = 50;

export function SubOrgsPage(p: PageProps): VNode {
  const by = p.query.get("by") ?? "NAME";
  const q = p.query.get("q") ?? "";
  const [value, setValue] = useState(q);
  const [filter, setFilter] = useState(by);
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  const load = useLoad(
    () =>
      p.api.query<{ organizationIds: string[] }>("list_suborgs", p.orgId, {
        ...(q ? { filterType: by, filterValue: q } : {}),
        paginationOptions: { limit: String(PAGE), ...(after ? { after } : {}) },
      }),
    [p.orgId, by, q, after],
  );
  const search = (e: Event) => {
    e.preventDefault();
    setCursors([]);
    const qs = new URLSearchParams(value ? { by: filter, q: value } : {}).toString();
    navigate(orgHref(p.orgId, `suborgs${qs ? `?${qs}` : ""}`));
  };
  const ids = load.data?.organizationIds ?? [];
  return h(
    "div",
    null,
    h("h1", null, "Sub-organizations"),
    h(
      "form",
      { class: "filters", onSubmit: search },
      h(
        "select",
        { "data-testid": "suborg-filter", value: filter, onChange: (e: Event) => setFilter((e.currentTarget as HTMLSelectElement).value) },
        FILTERS.map((f) => h("option", { key: f, value: f }, f.toLowerCase().replace(/_/g, " "))),
      ),
      h("input", {
        "data-testid": "suborg-search",
        placeholder: "value to match exactly",
        value,
        onInput: (e: Event) => setValue((e.currentTarget as HTMLInputElement).value),
      }),
      h("button", { type: "submit" }, "Search"),
    ),
    h(ErrorBanner, { error: load.error }),
    load.loading ? h(Loading, null) : null,
    h(
      "table",
      null,
      h("thead", null, h("tr", null, h("th", null, "Organization id"))),
      h(
        "tbody",
        null,
        ids.map((id) =>
          h("tr", { key: id, "data-testid": "suborg-row", "data-organization-id": id }, h("td", null, h("a", { href: orgHref(id) }, id))),
        ),
      ),
    ),
    !load.loading && ids.length === 0 ? h("p", { class: "muted" }, "No sub-organization matches.") : null,
    h(
      "div",
      { class: "pager" },
      cursors.length > 0
        ? h("button", { type: "button", class: "secondary", onClick: () => setCursors(cursors.slice(0, -1)) }, "Previous")
        : null,
      ids.length === PAGE
        ? h("button", { type: "button", class: "secondary", onClick: () => setCursors([...cursors, ids[ids.length - 1]!]) }, "Next")
        : null,
    ),
  );
}
