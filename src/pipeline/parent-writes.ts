// docs/request-path.md §5: a parent organization reads its sub-organizations but does not write
// to them. A credential found in an ancestor of the target organization (not in the target
// itself) may only submit what the definition explicitly opens to parents (parentMayStamp).
// Creating sub-organizations is not an exception here: the parent creates them in its own
// organization, with its own credential found there.
//
// Which definitions may open themselves is not left to each definition: the exceptions are
// the authentication and recovery flows a parent starts for its sub-organizations' users
// (OTP, passkey/stamp login, OAuth login, legacy email auth, email recovery), declared by
// the login methods (src/logins/), and a definition setting parentMayStamp on any other type
// stops the service at startup (`sigil serve` calls checkParentStampable on the registry; so
// does a unit test).
import { ApiError, Grpc } from "../errors.ts";
import type { SubmitRoute } from "../activities/define.ts";
import type { Principal } from "../auth/principal.ts";
import { LOGIN_PARENT_PATTERNS } from "../logins/index.ts";

/**
 * The activity types a parent's credential may submit in a sub-organization, as patterns
 * over the whole type: each login method declares its own (src/logins/, docs/logins.md §8).
 * Nothing else — no user, credential, policy or quorum change, no vote — may ever be opened
 * to parents.
 */
export const PARENT_STAMPABLE: readonly RegExp[] = LOGIN_PARENT_PATTERNS;

export function isParentStampable(type: string): boolean {
  return PARENT_STAMPABLE.some((p) => p.test(type));
}

/** Throws (naming them) when a definition opens a type to parents that may not be. */
export function checkParentStampable(routes: readonly Pick<SubmitRoute, "type" | "parentMayStamp">[]): void {
  const wrong = routes.filter((r) => r.parentMayStamp === true && !isParentStampable(r.type)).map((r) => r.type);
  if (wrong.length) {
    throw new Error(
      `parentMayStamp is set on ${wrong.join(", ")}: only the authentication and recovery flows in ` +
        "pipeline/parent-writes.ts PARENT_STAMPABLE may be submitted by a parent organization's credential (docs/request-path.md §5.2)",
    );
  }
}

/**
 * Throws 403 when `auth` is a parent's credential and `route` is not open to parents. The
 * allow-list is consulted again here, not only at startup: a definition assembled at run time
 * (tests, a future plug-in) cannot open anything else either.
 */
export function refuseParentWrite(route: SubmitRoute, auth: Principal): void {
  if (!auth.fromAncestor || (route.parentMayStamp === true && isParentStampable(route.type))) return;
  throw new ApiError(
    Grpc.PERMISSION_DENIED,
    "REQUEST_NOT_AUTHORIZED",
    `request not authorized: the signing credential belongs to organization ${auth.actor.organizationId}, a parent of ` +
      `organization ${auth.organization.id}; a parent organization may read its sub-organizations but not submit ` +
      `${route.type} in them — sign with a credential of a user of ${auth.organization.id}`,
  );
}
