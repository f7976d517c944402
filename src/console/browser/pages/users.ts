/// <reference lib="dom" />
// #/org/<id>/users and #/org/<id>/users/<userId>: users with their API keys, authenticators,
// OAuth providers, tags and MFA policies (list_users, get_user, list_user_tags, get_mfa_policies).
import { useState } from "preact/hooks";
import type { Json } from "../api.ts";
import type { PageProps } from "../page.ts";
import { ErrorBanner, fmtTime, h, Loading, orgHref, ReadOnlyNote, Section, useLoad, type VNode } from "../ui.ts";

function useTagNames(p: PageProps) {
  return useLoad(
    () =>
      p.api
        .query<{ userTags: Json[] }>("list_user_tags", p.orgId)
        .then((r) => new Map(r.userTags.map((t) => [String(t.tagId), String(t.tagName)]))),
    [p.orgId],
  );
}

export function UsersPage(p: PageProps): VNode {
  const [search, setSearch] = useState(p.query.get("q") ?? "");
  const load = useLoad(() => p.api.query<{ users: Json[] }>("list_users", p.orgId).then((r) => r.users), [p.orgId]);
  const tags = useTagNames(p);
  const needle = search.trim().toLowerCase();
  const users = (load.data ?? []).filter(
    (u) =>
      !needle ||
      [u.userName, u.userEmail, u.userPhoneNumber, u.userId].some((v) => typeof v === "string" && v.toLowerCase().includes(needle)),
  );
  return h(
    "div",
    null,
    h("h1", null, "Users"),
    h(ReadOnlyNote, { readOnly: p.readOnly }),
    h("input", {
      class: "search",
      "data-testid": "user-search",
      placeholder: "name, email, phone or id",
      value: search,
      onInput: (e: Event) => setSearch((e.currentTarget as HTMLInputElement).value),
    }),
    h(ErrorBanner, { error: load.error ?? tags.error }),
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
          ["Name", "Email", "Phone", "API keys", "Passkeys", "OAuth", "Tags", "Created"].map((t) => h("th", { key: t }, t)),
        ),
      ),
      h(
        "tbody",
        null,
        users.map((u) =>
          h(
            "tr",
            { key: u.userId, "data-testid": "user-row", "data-user-id": u.userId },
            h("td", null, h("a", { href: orgHref(p.orgId, `users/${encodeURIComponent(u.userId)}`) }, u.userName || u.userId)),
            h("td", null, u.userEmail ?? ""),
            h("td", null, u.userPhoneNumber ?? ""),
            h("td", null, String(u.apiKeys.length)),
            h("td", null, String(u.authenticators.length)),
            h("td", null, String(u.oauthProviders.length)),
            h("td", null, (u.userTags as string[]).map((t) => tags.data?.get(t) ?? t).join(", ")),
            h("td", null, fmtTime(u.createdAt)),
          ),
        ),
      ),
    ),
    !load.loading && users.length === 0 ? h("p", { class: "muted" }, "No user matches.") : null,
  );
}

export function UserPage(p: PageProps): VNode {
  const userId = p.params.userId!;
  const load = useLoad(() => p.api.query<{ user: Json }>("get_user", p.orgId, { userId }).then((r) => r.user), [p.orgId, userId]);
  const mfa = useLoad(
    () => p.api.query<{ mfaPolicies: Json[] }>("get_mfa_policies", p.orgId, { userId }).then((r) => r.mfaPolicies),
    [p.orgId, userId],
  );
  const tags = useTagNames(p);
  const u = load.data;
  const table = (cols: string[], rows: (string | VNode)[][], testid: string) =>
    rows.length === 0
      ? h("p", { class: "muted" }, "None.")
      : h(
          "table",
          null,
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              cols.map((c) => h("th", { key: c }, c)),
            ),
          ),
          h(
            "tbody",
            null,
            rows.map((r, i) =>
              h(
                "tr",
                { key: i, "data-testid": testid },
                r.map((c, j) => h("td", { key: j }, c)),
              ),
            ),
          ),
        );
  return h(
    "div",
    null,
    h("p", null, h("a", { href: orgHref(p.orgId, "users") }, "← Users")),
    h(ErrorBanner, { error: load.error }),
    load.loading && !u ? h(Loading, null) : null,
    u
      ? h(
          "div",
          { "data-testid": "user-detail", "data-user-id": u.userId },
          h("h1", null, u.userName),
          h(
            "p",
            { class: "muted" },
            h("code", null, u.userId),
            u.userEmail ? ` · ${u.userEmail}` : "",
            u.userPhoneNumber ? ` · ${u.userPhoneNumber}` : "",
          ),
          h(
            Section,
            { title: "API keys" },
            table(
              ["Name", "Public key", "Type", "Expires", "Created"],
              (u.apiKeys as Json[]).map((k) => [
                k.apiKeyName,
                h("code", null, k.credential?.publicKey ?? ""),
                k.credential?.type ?? "",
                k.expirationSeconds ? `${k.expirationSeconds} s` : "never",
                fmtTime(k.createdAt),
              ]),
              "api-key-row",
            ),
          ),
          h(
            Section,
            { title: "Authenticators (passkeys)" },
            table(
              ["Name", "Credential id", "AAGUID", "Created"],
              (u.authenticators as Json[]).map((a) => [
                a.authenticatorName ?? "",
                h("code", null, a.credentialId ?? ""),
                a.aaguid ?? "",
                fmtTime(a.createdAt),
              ]),
              "authenticator-row",
            ),
          ),
          h(
            Section,
            { title: "OAuth providers" },
            table(
              ["Name", "Issuer", "Subject", "Audience"],
              (u.oauthProviders as Json[]).map((o) => [o.providerName ?? "", o.issuer ?? "", o.subject ?? "", o.audience ?? ""]),
              "oauth-row",
            ),
          ),
          h(
            Section,
            { title: "Tags" },
            (u.userTags as string[]).length === 0
              ? h("p", { class: "muted" }, "None.")
              : h(
                  "ul",
                  null,
                  (u.userTags as string[]).map((t) => h("li", { key: t }, tags.data?.get(t) ?? t)),
                ),
          ),
          h(
            Section,
            { title: "MFA policies" },
            h(ErrorBanner, { error: mfa.error }),
            table(
              ["Order", "Policy", "Condition", "Required methods"],
              (mfa.data ?? []).map((m) => [
                String(m.order),
                m.mfaPolicyName,
                h("code", null, m.condition),
                (m.requiredAuthenticationMethods as Json[])
                  .map((step) => (step.any as Json[]).map((x) => x.type).join(" or "))
                  .join(", then "),
              ]),
              "mfa-row",
            ),
          ),
        )
      : null,
  );
}
