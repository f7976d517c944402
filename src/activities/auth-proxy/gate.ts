// Who may configure the auth proxy (docs/auth-proxy.md §2): only a top-level organization —
// the app's backend, the one `sigil init` makes. Sub-organizations are end users and never
// configure a proxy that signs for their parent's app.
//
// The check runs in the submit pipeline right after authentication and the parent-write check,
// before parameters are validated or any policy is consulted (pipeline/validate.ts), like the
// TVC gate (activities/tvc/gate.ts): a refused request gets 403 and leaves nothing behind. Each
// handler checks again when it executes (for an activity that waited for approvals).
import { permissionDenied, type ApiError } from "../../errors.ts";
import { organizationChain } from "../../store/organizations.ts";
import type { ExecuteContext } from "../define.ts";

export const AUTH_PROXY_RESOURCE = "AUTH_PROXY";

/** The policy facts of an auth proxy activity (docs/auth-proxy.md §2.1): resource AUTH_PROXY, kind from the type. */
export function authProxyFacts<T extends string>(type: `ACTIVITY_TYPE_${T}`, action: "CREATE" | "UPDATE" | "DELETE") {
  return { type, resource: AUTH_PROXY_RESOURCE, action, kind: type.slice("ACTIVITY_TYPE_".length) };
}

export function notTopLevel(organizationId: string): ApiError {
  return permissionDenied(`the auth proxy can be configured only by a top-level organization; ${organizationId} is a sub-organization`);
}

/** Pipeline step (pipeline/validate.ts): the credential's organization must have no parent. */
export function refuseAuthProxyOutsideRoot(def: { resource: string }, who: { fromAncestor: boolean; organizationId: string }, organizationIsRoot: boolean): void {
  if (def.resource !== AUTH_PROXY_RESOURCE) return;
  if (who.fromAncestor || !organizationIsRoot) throw notTopLevel(who.organizationId);
}

/** The same rule inside a handler's transaction. */
export async function topLevelAtExecution(ctx: ExecuteContext<unknown>): Promise<void> {
  const chain = await organizationChain(ctx.tx, ctx.organization.id, ctx.chains);
  if (chain.length !== 1) throw notTopLevel(ctx.organization.id);
}
