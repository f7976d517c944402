/// <reference lib="dom" />
// The console's shell (docs/console.md §5): the session, the hash route, the navigation, who is
// logged in, log out. Pages come from the one route list (pages/index.ts).
import { useEffect, useErrorBoundary, useMemo, useState } from "preact/hooks";
import { Api, ApiError, keyStamper } from "./api.ts";
import { clearSession, rememberOrganizationId, restoreSession } from "./credentials.ts";
import { whoami, type LoggedIn } from "./login.ts";
import { match, navigate, parseHash, type Location } from "./page.ts";
import { LoginPage } from "./pages/login.ts";
import { NAV, ROUTES } from "./pages/index.ts";
import { ErrorBanner, h, Loading, orgHref, type ComponentChildren, type VNode } from "./ui.ts";

function useLocation(): Location {
  const [loc, setLoc] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setLoc(parseHash(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return loc;
}

/** A page that fails while rendering (an answer of an unexpected shape) shows the error in the banner; the shell stays. */
function PageBoundary(props: { children?: ComponentChildren }): VNode {
  const [error, reset] = useErrorBoundary();
  if (error)
    return h("div", null, h(ErrorBanner, { error }), h("button", { type: "button", class: "secondary", onClick: reset }, "Try again"));
  return h("div", null, props.children);
}

export function App(): VNode {
  const loc = useLocation();
  // undefined: still restoring; null: logged out.
  const [state, setState] = useState<LoggedIn | null | undefined>(undefined);
  const [restoreError, setRestoreError] = useState<unknown>(undefined);

  useEffect(() => {
    restoreSession()
      .then(async (session) => {
        if (!session) return setState(null);
        try {
          setState({ session, me: await whoami(session) });
        } catch (err) {
          // A key the server no longer knows (expired session, deleted key): back to the login form.
          if (err instanceof ApiError && err.status === 401) await clearSession();
          setRestoreError(err);
          setState(null);
        }
      })
      .catch((err: unknown) => {
        setRestoreError(err);
        setState(null);
      });
  }, []);

  const expire = () => {
    void clearSession().then(() => {
      navigate("#/login");
      setRestoreError(new Error("The session has expired: log in again."));
      setState(null);
    });
  };
  const api = useMemo(() => (state ? new Api(keyStamper(state.session.key), expire) : undefined), [state]);
  // A passkey session ends at its expiry: the page logs out then rather than fail its next request.
  useEffect(() => {
    const at = state?.session.expiresAt;
    if (!at) return;
    const timer = setTimeout(expire, Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1));
    return () => clearTimeout(timer);
  }, [state]);

  const onLogin = (l: LoggedIn) => {
    rememberOrganizationId(l.session.organizationId);
    setRestoreError(undefined);
    setState(l);
    navigate(orgHref(l.me.organizationId));
  };
  const logout = async () => {
    await clearSession();
    navigate("#/login");
    setState(null);
  };

  if (state === undefined) return h("main", { class: "centered" }, h(Loading, { what: "the session" }));
  if (state === null || !api) {
    // The hash as it is now (a log out has just set #/login; the hashchange event comes later).
    const now = parseHash(location.hash);
    if (now.path[0] !== "login")
      navigate(now.path[0] === "org" && now.path[1] ? `#/login?org=${encodeURIComponent(now.path[1])}` : "#/login");
    return h("main", { class: "centered" }, h(ErrorBanner, { error: restoreError }), h(LoginPage, { query: loc.query, onLogin }));
  }
  const { session, me } = state;
  if (loc.path[0] !== "org" || !loc.path[1]) {
    navigate(orgHref(me.organizationId));
    return h("main", null, h(Loading, null));
  }
  const orgId = loc.path[1];
  const found = match(ROUTES, loc.path);
  const readOnly = orgId !== me.organizationId;
  return h(
    "div",
    { class: "shell" },
    h(
      "header",
      { class: "top" },
      h("a", { class: "brand", href: orgHref(me.organizationId) }, "Sigil console"),
      h(
        "span",
        { class: "whoami", "data-testid": "whoami", "data-user-id": me.userId, "data-organization-id": me.organizationId },
        h("strong", null, me.username),
        " · ",
        me.organizationName,
        " ",
        h("code", null, me.organizationId),
        session.kind === "passkey" ? " (passkey session)" : " (API key)",
      ),
      h("button", { type: "button", class: "secondary", "data-testid": "logout", onClick: () => void logout() }, "Log out"),
    ),
    h(
      "nav",
      { class: "side" },
      orgId !== me.organizationId ? h("p", { class: "muted" }, "Viewing ", h("code", null, orgId)) : null,
      NAV.map((n) =>
        h("a", { href: orgHref(orgId, n.path), "data-testid": `nav-${n.id}`, class: found?.route.nav === n.id ? "active" : "" }, n.label),
      ),
    ),
    h(
      "main",
      { class: "content" },
      found
        ? h(
            PageBoundary,
            { key: loc.path.join("/") },
            h(found.route.page, { api, session, me, orgId, params: Object.fromEntries(found.params), query: loc.query, readOnly }),
          )
        : h(ErrorBanner, { error: new Error(`no page at #/${loc.path.join("/")}`) }),
    ),
  );
}
