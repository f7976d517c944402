/// <reference lib="dom" />
// #/login (docs/console.md §4): the organization id (from the URL, else the last one used), then
// a passkey or a pasted API key.
import { useState } from "preact/hooks";
import { lastOrganizationId } from "../credentials.ts";
import { apiKeyLogin, passkeyLogin, type LoggedIn } from "../login.ts";
import { ErrorBanner, h, type VNode } from "../ui.ts";

export function LoginPage(props: { query: URLSearchParams; onLogin: (l: LoggedIn) => void }): VNode {
  const [orgId, setOrgId] = useState(() => props.query.get("org") ?? lastOrganizationId());
  const [pub, setPub] = useState("");
  const [priv, setPriv] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const run = async (how: () => Promise<LoggedIn>) => {
    if (!orgId.trim()) return setError(new Error("enter the organization id"));
    setBusy(true);
    setError(undefined);
    try {
      props.onLogin(await how());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const input = (testid: string, label: string, value: string, set: (v: string) => void, extra: Record<string, unknown> = {}) =>
    h(
      "label",
      null,
      label,
      h("input", {
        "data-testid": testid,
        value,
        autocomplete: "off",
        spellcheck: false,
        onInput: (e: Event) => set((e.currentTarget as HTMLInputElement).value),
        ...extra,
      }),
    );

  return h(
    "div",
    { class: "card login" },
    h("h1", null, "Sigil console"),
    h(ErrorBanner, { error }),
    input("login-org-id", "Organization id", orgId, setOrgId, { placeholder: "the organization (or a parent of it) to log in to" }),
    h("h2", null, "Passkey"),
    h("p", { class: "muted" }, "Registers a session key kept in this browser, unreadable by any page, for 15 minutes."),
    h(
      "button",
      { type: "button", "data-testid": "login-passkey", disabled: busy, onClick: () => void run(() => passkeyLogin(orgId.trim())) },
      "Log in with a passkey",
    ),
    h("h2", null, "API key (developer machine)"),
    h("p", { class: "muted" }, "Kept for this tab only; closing the tab or logging out forgets it."),
    input("login-api-public", "Public key (hex)", pub, setPub),
    input("login-api-private", "Private key (hex)", priv, setPriv, { type: "password" }),
    h(
      "button",
      {
        type: "button",
        "data-testid": "login-api-key",
        disabled: busy,
        onClick: () => void run(() => apiKeyLogin(orgId.trim(), pub, priv)),
      },
      "Log in with the API key",
    ),
  );
}
