// Who may configure the auth proxy (docs/auth-proxy.md §2): only a top-level organization —
// the app's backend, the one `sigil init` makes. Sub-organizations are end users and never
// configure a proxy that signs for their parent's app.
//
// Each auth proxy definition declares AUTH_PROXY_SCOPE; the pipeline checks it (pipeline/scope.ts)
// right after authentication and the parent-write check, before parameters are validated or any
// policy is consulted, like the TVC gate (activities/tvc/gate.ts): a refused request gets 403 and
// leaves nothing behind. It checks again when the activity executes (after approvals).
import { permissionDenied, type ApiError } from "../../errors.ts";
import type { ActivityScope } from "../define.ts";

export const AUTH_PROXY_RESOURCE = "AUTH_PROXY";

/** The policy facts of an auth proxy activity (docs/auth-proxy.md §2.1): resource AUTH_PROXY, kind from the type. */
export function authProxyFacts<T extends string>(type: `ACTIVITY_TYPE_${T}`, action: "CREATE" | "UPDATE" | "DELETE") {
  return { type, resource: AUTH_PROXY_RESOURCE, action, kind: type.slice("ACTIVITY_TYPE_".length) };
}

export function notTopLevel(organizationId: string): ApiError {
  return permissionDenied(`the auth proxy can be configured only by a top-level organization; ${organizationId} is a sub-organization`);
}

/** The scope of the auth proxy's configuration activities: top-level organizations. */
export const AUTH_PROXY_SCOPE: ActivityScope = { only: "top-level", refusal: notTopLevel };
