// Where a stamp's credential may be found, relative to the organization a request targets
// (docs/stamps.md §5) — decided here and nowhere else. Every strategy looks its credential up
// by what the stamp names (a public key, a WebAuthn credential id, …) in all organizations
// at once, and this module picks the holder the request may act as.
import { unauthenticated } from "../errors.ts";
import { organizationChain, organizationIsLive, type ChainCache } from "../store/organizations.ts";
import type { Executor } from "../store/schema.ts";

/**
 * "target-then-ancestors": the target organization first, then its parent, and so on up
 * (the nearest wins, so a sub-organization user's key beats the same key in the parent).
 *
 * "then-descendants": as above, and when no organization of that chain holds the
 * credential, the unique organization *below* the target that holds it (stamp_login, whoami
 * and the attested schemes: core's loginWithPasskey stamps stamp_login with the parent
 * organization's id and a passkey registered in the user's sub-organization). Only the holders the caller deems
 * eligible count below (verified contacts, a passkey whose key verifies the assertion, the
 * one key registration ranked first: docs/login-lookups.md §2, §3); two or more eligible holders in different organizations is
 * CREDENTIAL_CONFLICT. A holder found below acts in its own organization: the request is
 * re-targeted there (Resolved.organizationId).
 */
export type CredentialScope = "target-then-ancestors" | "then-descendants";

export interface Holder {
  organization_id: string;
}

export interface Resolved<H extends Holder> {
  holder: H;
  fromAncestor: boolean;
  /** The organization the request acts on: the target, or the holder's when found below it. */
  organizationId: string;
}

/**
 * The holder of the credential the request may act as, or undefined. An organization that
 * does not exist has no chain and so no holder: it is answered like one where the credential
 * is unknown, and a caller who is no user of it (or of an ancestor) learns nothing about
 * which organizations exist. `what` names the credential in the conflict error
 * ("a credential ID", "a public key").
 */
export async function resolveHolder<H extends Holder>(
  db: Executor,
  targetOrganizationId: string,
  scope: CredentialScope,
  lookUp: () => Promise<readonly H[]>,
  chains: ChainCache,
  what = "a public key",
  /**
   * Which of the holders found *below* the target may be the one (docs/login-lookups.md §2):
   * a sub-organization is another tenant, so what it wrote on its own (an unverified contact,
   * a passkey credential id it registered) must neither name the user a login resolves to
   * nor cause a CREDENTIAL_CONFLICT. Only the holders kept here count; absent, all do.
   */
  eligibleBelow?: (below: H[]) => Promise<H[]> | H[],
): Promise<Resolved<H> | undefined> {
  // Both reads at once: the chain is usually cached, the look-up never is.
  const [chain, holders] = await Promise.all([organizationChain(db, targetOrganizationId, chains), lookUp()]);
  for (const orgId of chain) {
    const holder = holders.find((h) => h.organization_id === orgId);
    if (!holder) continue;
    const fromAncestor = orgId !== targetOrganizationId;
    // The chain is cached structure; a deleted organization keeps its place in it. A holder in
    // the target proves it live (deletion removes every credential with it); an ancestor's
    // credential names it only by id, so its deletion is read (docs/organizations.md §7.3).
    if (fromAncestor && !(await organizationIsLive(db, targetOrganizationId))) return undefined;
    return { holder, fromAncestor, organizationId: targetOrganizationId };
  }
  if (scope !== "then-descendants" || chain.length === 0) return undefined;
  let below: H[] = [];
  for (const h of holders) {
    const hChain = await organizationChain(db, h.organization_id, chains);
    if (hChain.includes(targetOrganizationId)) below.push(h);
  }
  if (eligibleBelow && below.length > 0) below = await eligibleBelow(below);
  if (below.length === 0) return undefined;
  if (new Set(below.map((h) => h.organization_id)).size > 1) {
    throw unauthenticated("CREDENTIAL_CONFLICT", `more than one suborg associated with ${what}`);
  }
  return { holder: below[0]!, fromAncestor: false, organizationId: below[0]!.organization_id };
}
