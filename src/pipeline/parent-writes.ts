// POLICY-LANGUAGE §6.7: a parent organization reads its sub-organizations but does not
// write to them. A credential found in an ancestor of the target organization (not in the
// target itself) may only submit what the definition explicitly opens to parents
// (authentication and recovery flows, none yet). Creating sub-organizations is not an
// exception here: the parent creates them in its own organization, with its own
// credential found there.
import { ApiError, Grpc } from "../errors.ts";
import type { SubmitRoute } from "../activities/define.ts";
import type { Principal } from "../auth/principal.ts";

/** Throws 403 when `auth` is a parent's credential and `route` is not open to parents. */
export function refuseParentWrite(route: SubmitRoute, auth: Principal): void {
  if (!auth.fromAncestor || route.parentMayStamp === true) return;
  throw new ApiError(
    Grpc.PERMISSION_DENIED,
    "REQUEST_NOT_AUTHORIZED",
    `request not authorized: the signing credential belongs to organization ${auth.actor.organizationId}, a parent of ` +
      `organization ${auth.organization.id}; a parent organization may read its sub-organizations but not submit ` +
      `${route.type} in them — sign with a credential of a user of ${auth.organization.id}`,
  );
}
