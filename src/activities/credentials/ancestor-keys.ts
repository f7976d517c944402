// An organization's API key (or session key) must not be registered below it by anyone but
// that organization (docs/sessions-and-network.md §2). A stamp is
// resolved nearest first (auth/credential-scope.ts: a sub-organization user's key beats the
// same key in the parent), so a sub-organization user who registers the parent backend's
// public key — it is no secret: every vote the backend casts in the sub-organization names
// it — would make the backend's own requests on that sub-organization (oauth_login, reads)
// act as the attacker's user, under the attacker's policies. The parent itself may still put
// its key on a sub-organization's user (create_sub_organization with the backend's key as a
// root user's: that is its choice); nobody below it may.
import { alreadyExists } from "../../errors.ts";
import { organizationChain, type ChainCache } from "../../store/organizations.ts";
import type { Executor } from "../../store/schema.ts";

export interface KeyToCheck {
  publicKey: string;
  field: string;
}

/**
 * Refuses (409) any of `keys` held by an organization above the one it is being registered
 * in that the acting organization is not (or not above). `above`: the organizations above
 * the one the keys go to, nearest first (its chain without itself).
 */
export async function refuseAncestorKeys(
  tx: Executor,
  above: readonly string[],
  actingOrganizationId: string,
  keys: readonly KeyToCheck[],
): Promise<void> {
  if (keys.length === 0) return;
  // The acting organization is the target itself (not in `above`: every ancestor is guarded)
  // or an ancestor acting on it (only what is above the acting organization is guarded).
  const guarded = above.slice(above.indexOf(actingOrganizationId) + 1);
  if (guarded.length === 0) return;
  const normalized = [...new Set(keys.map((k) => k.publicKey.toLowerCase()))];
  const held = await tx
    .selectFrom("api_keys")
    .select("public_key_normalized")
    .where("public_key_normalized", "in", normalized)
    .where("organization_id", "in", guarded)
    .executeTakeFirst();
  if (!held) return;
  const k = keys.find((x) => x.publicKey.toLowerCase() === held.public_key_normalized)!;
  throw alreadyExists(
    `${k.field}: this public key is a credential of a parent organization; only that organization may register it below itself`,
  );
}

/** The organizations above `organizationId`, nearest first. */
export async function organizationsAbove(db: Executor, organizationId: string, chains: ChainCache): Promise<string[]> {
  return (await organizationChain(db, organizationId, chains)).slice(1);
}
