/// <reference lib="dom" />
// #/org/<id>: the organization — name, root quorum, features, counts (get_organization).
import type { PageProps } from "../page.ts";
import { ErrorBanner, fmtTime, h, Loading, orgHref, ReadOnlyNote, Section, useLoad, type VNode } from "../ui.ts";
import type { Json } from "../api.ts";

export function OverviewPage(p: PageProps): VNode {
  const load = useOrg(p);
  const org = load.data;
  return h(
    "div",
    null,
    h(ReadOnlyNote, { readOnly: p.readOnly }),
    h(ErrorBanner, { error: load.error }),
    !org && load.loading ? h(Loading, { what: "the organization" }) : null,
    org
      ? h(
          "div",
          null,
          h("h1", { "data-testid": "org-name" }, org.name),
          h("p", { class: "muted" }, h("code", null, org.organizationId)),
          h(
            Section,
            { title: "Root quorum", testid: "root-quorum" },
            h("p", null, `${org.rootQuorum.threshold} of ${org.rootQuorum.userIds.length} root users must approve.`),
            h(
              "ul",
              null,
              org.rootQuorum.userIds.map((id: string) => {
                const u = (org.users as Json[]).find((x) => x.userId === id);
                return h("li", { key: id }, h("a", { href: orgHref(p.orgId, `users/${encodeURIComponent(id)}`) }, u?.userName ?? id));
              }),
            ),
          ),
          h(
            Section,
            { title: "Features" },
            org.features.length === 0
              ? h("p", { class: "muted" }, "No feature is on.")
              : h(
                  "ul",
                  null,
                  (org.features as Json[]).map((f) =>
                    h("li", { key: f.name }, h("code", null, f.name), f.value ? ` = ${String(f.value)}` : ""),
                  ),
                ),
          ),
          h(
            Section,
            { title: "Counts", testid: "org-counts" },
            h(
              "dl",
              { class: "counts" },
              (
                [
                  ["Users", org.users.length, "users"],
                  ["Policies", org.policies.length, "policies"],
                  ["Wallets", org.wallets.length, "wallets"],
                  ["Private keys", org.privateKeys.length, "wallets"],
                  ["Tags", org.tags.length, "users"],
                  ["Open invitations", org.invitations.length, ""],
                ] as const
              ).map(([label, n, to]) =>
                h(
                  "div",
                  { key: label },
                  h("dt", null, to ? h("a", { href: orgHref(p.orgId, to) }, label) : label),
                  h("dd", { "data-count": label }, String(n)),
                ),
              ),
            ),
          ),
          org.invitations.length > 0
            ? h(
                Section,
                { title: "Invitations" },
                h(
                  "ul",
                  null,
                  (org.invitations as Json[]).map((i) =>
                    h("li", { key: i.invitationId }, `${i.receiverUserName ?? ""} ${i.receiverEmail ?? ""} · ${fmtTime(i.createdAt)}`),
                  ),
                ),
              )
            : null,
        )
      : null,
  );
}

/** get_organization's organizationData for the page's organization. */
export function useOrg(p: PageProps) {
  return useLoad(() => p.api.query<{ organizationData: Json }>("get_organization", p.orgId).then((r) => r.organizationData), [p.orgId]);
}
