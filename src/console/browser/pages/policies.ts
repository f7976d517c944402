/// <reference lib="dom" />
// #/org/<id>/policies: the organization's policies (list_policies), each opening the editor.
import type { Json } from "../api.ts";
import type { PageProps } from "../page.ts";
import { ErrorBanner, fmtTime, h, Loading, orgHref, ReadOnlyNote, shortEnum, useLoad, type VNode } from "../ui.ts";

export function PoliciesPage(p: PageProps): VNode {
  const load = useLoad(() => p.api.query<{ policies: Json[] }>("list_policies", p.orgId).then((r) => r.policies), [p.orgId]);
  const rows = load.data ?? [];
  return h(
    "div",
    null,
    h("h1", null, "Policies"),
    h(ReadOnlyNote, { readOnly: p.readOnly }),
    p.readOnly ? null : h("p", null, h("a", { href: orgHref(p.orgId, "policies/new"), "data-testid": "policy-new" }, "New policy")),
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
          ["Name", "Effect", "Condition", "Consensus", "Updated"].map((c) => h("th", { key: c }, c)),
        ),
      ),
      h(
        "tbody",
        null,
        rows.map((pol) =>
          h(
            "tr",
            { key: pol.policyId, "data-testid": "policy-row", "data-policy-id": pol.policyId },
            h(
              "td",
              null,
              h("a", { href: orgHref(p.orgId, `policies/${encodeURIComponent(pol.policyId)}`) }, pol.policyName || pol.policyId),
            ),
            h("td", null, shortEnum(pol.effect, "EFFECT_")),
            h("td", null, h("code", null, pol.condition)),
            h("td", null, h("code", null, pol.consensus)),
            h("td", null, fmtTime(pol.updatedAt)),
          ),
        ),
      ),
    ),
    !load.loading && rows.length === 0 && !load.error ? h("p", { class: "muted" }, "No policy: only the root quorum may act.") : null,
  );
}
