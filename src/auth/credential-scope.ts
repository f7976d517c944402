// Where a stamp's credential may be found, relative to the organization a request targets
// (WIRE-NOTES §3.4) — decided here and nowhere else. Every strategy looks its credential up
// by what the stamp names (a public key, a WebAuthn credential id, …) in all organizations
// at once, and this module picks the holder the request may act as.
import { organizationChain, type ChainCache } from "../store/organizations.ts";
import type { Executor } from "../store/schema.ts";

/**
 * "target-then-ancestors": the target organization first, then its parent, and so on up
 * (the nearest wins, so a sub-organization user's key beats the same key in the parent).
 * The login types (stamp_login, whoami for passkey users) will add resolution *downward* —
 * a credential held by the unique sub-organization below the target, two holders being
 * CREDENTIAL_CONFLICT — as another scope here; it is not built yet.
 */
export type CredentialScope = "target-then-ancestors";

export interface Holder {
  organization_id: string;
}

export interface Resolved<H extends Holder> {
  holder: H;
  fromAncestor: boolean;
}

/**
 * The holder of the credential the request may act as, or undefined. An organization that
 * does not exist has no chain and so no holder: it is answered like one where the credential
 * is unknown, and a caller who is no user of it (or of an ancestor) learns nothing about
 * which organizations exist.
 */
export async function resolveHolder<H extends Holder>(
  db: Executor,
  targetOrganizationId: string,
  _scope: CredentialScope,
  lookUp: () => Promise<readonly H[]>,
  chains: ChainCache,
): Promise<Resolved<H> | undefined> {
  // Both reads at once: the chain is usually cached, the look-up never is.
  const [chain, holders] = await Promise.all([organizationChain(db, targetOrganizationId, chains), lookUp()]);
  for (const orgId of chain) {
    const holder = holders.find((h) => h.organization_id === orgId);
    if (holder) return { holder, fromAncestor: orgId !== targetOrganizationId };
  }
  return undefined;
}
