/// <reference lib="dom" />
// #/org/<id>/wallets: wallets with their accounts, and private keys (list_wallets,
// list_wallet_accounts, list_private_keys). Nothing here exports: the console never asks
// for key material (docs/console.md §5).
import { useState } from "preact/hooks";
import type { Json } from "../api.ts";
import type { PageProps } from "../page.ts";
import { ErrorBanner, fmtTime, h, Loading, Section, useLoad, type VNode } from "../ui.ts";

const ACCOUNTS_PAGE = 100;

function Accounts(props: { p: PageProps; walletId: string }): VNode {
  const { p, walletId } = props;
  const load = useLoad(
    () =>
      p.api
        .query<{ accounts: Json[] }>("list_wallet_accounts", p.orgId, { walletId, paginationOptions: { limit: String(ACCOUNTS_PAGE) } })
        .then((r) => r.accounts),
    [p.orgId, walletId],
  );
  const rows = load.data ?? [];
  return h(
    "div",
    null,
    h(ErrorBanner, { error: load.error }),
    load.loading ? h(Loading, null) : null,
    rows.length > 0
      ? h(
          "table",
          null,
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ["Address", "Format", "Path", "Curve", "Created"].map((c) => h("th", { key: c }, c)),
            ),
          ),
          h(
            "tbody",
            null,
            rows.map((a) =>
              h(
                "tr",
                { key: a.walletAccountId, "data-testid": "wallet-account-row", "data-address": a.address },
                h("td", null, h("code", null, a.address)),
                h("td", null, a.addressFormat),
                h("td", null, a.path),
                h("td", null, a.curve),
                h("td", null, fmtTime(a.createdAt)),
              ),
            ),
          ),
        )
      : !load.loading
        ? h("p", { class: "muted" }, "No account.")
        : null,
    rows.length === ACCOUNTS_PAGE ? h("p", { class: "muted" }, `The first ${ACCOUNTS_PAGE} accounts.`) : null,
  );
}

export function WalletsPage(p: PageProps): VNode {
  const wallets = useLoad(() => p.api.query<{ wallets: Json[] }>("list_wallets", p.orgId).then((r) => r.wallets), [p.orgId]);
  const keys = useLoad(() => p.api.query<{ privateKeys: Json[] }>("list_private_keys", p.orgId).then((r) => r.privateKeys), [p.orgId]);
  const [open, setOpen] = useState<string | undefined>(undefined);
  return h(
    "div",
    null,
    h("h1", null, "Wallets"),
    h(ErrorBanner, { error: wallets.error }),
    wallets.loading ? h(Loading, null) : null,
    h(
      "table",
      null,
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ["Wallet", "Created", "Imported", "Exported", ""].map((c, i) => h("th", { key: i }, c)),
        ),
      ),
      h(
        "tbody",
        null,
        (wallets.data ?? []).flatMap((w) => [
          h(
            "tr",
            { key: w.walletId, "data-testid": "wallet-row", "data-wallet-id": w.walletId },
            h("td", null, w.walletName, h("div", { class: "muted" }, h("code", null, w.walletId))),
            h("td", null, fmtTime(w.createdAt)),
            h("td", null, w.imported ? "yes" : "no"),
            h("td", null, w.exported ? "yes" : "no"),
            h(
              "td",
              null,
              h(
                "button",
                {
                  type: "button",
                  class: "secondary",
                  "data-testid": "wallet-accounts",
                  onClick: () => setOpen(open === w.walletId ? undefined : w.walletId),
                },
                open === w.walletId ? "Hide accounts" : "Accounts",
              ),
            ),
          ),
          open === w.walletId
            ? h("tr", { key: `${w.walletId}-accounts` }, h("td", { colSpan: 5 }, h(Accounts, { p, walletId: w.walletId })))
            : null,
        ]),
      ),
    ),
    !wallets.loading && (wallets.data ?? []).length === 0 && !wallets.error ? h("p", { class: "muted" }, "No wallet.") : null,
    h(
      Section,
      { title: "Private keys" },
      h(ErrorBanner, { error: keys.error }),
      (keys.data ?? []).length === 0
        ? h("p", { class: "muted" }, keys.loading ? "Loading…" : "No private key.")
        : h(
            "table",
            null,
            h(
              "thead",
              null,
              h(
                "tr",
                null,
                ["Name", "Curve", "Addresses", "Created"].map((c) => h("th", { key: c }, c)),
              ),
            ),
            h(
              "tbody",
              null,
              (keys.data ?? []).map((k) =>
                h(
                  "tr",
                  { key: k.privateKeyId, "data-testid": "private-key-row" },
                  h("td", null, k.privateKeyName, h("div", { class: "muted" }, h("code", null, k.privateKeyId))),
                  h("td", null, k.curve),
                  h(
                    "td",
                    null,
                    (k.addresses as Json[]).map((a, i) => h("div", { key: i }, h("code", null, a.address), ` ${String(a.format ?? "")}`)),
                  ),
                  h("td", null, fmtTime(k.createdAt)),
                ),
              ),
            ),
          ),
    ),
  );
}
