// The compiled policies and root quorum of an organization, as the pipeline caches them: one
// GovernanceCache per store, on the service state (src/service-state.ts).
import type { PolicySet, RootQuorum } from "../policy/engine.ts";

export interface OrgGovernance {
  version: number;
  set: PolicySet;
  quorum: RootQuorum;
  /** Content address of the policy ids (policy_sets.id), referenced by evaluation records. */
  setId: string;
  policyIds: readonly string[];
  /** The policy_sets row is known to be committed; until then each record writes it too. */
  persisted: boolean;
}

// Compiled once per (organization, policy version), per store (one GovernanceCache on the
// service state). The version is bumped in the same transaction as every policy or root quorum
// change, and read fresh by each request (the request snapshot carries it, snapshot.ts), so a
// node never decides with a stale set for longer than a request that raced the change.
// Bounded like the organization-chain cache.
const MAX_CACHED = 10_000;

export class GovernanceCache {
  readonly #byOrganization = new Map<string, OrgGovernance>();

  get(organizationId: string): OrgGovernance | undefined {
    return this.#byOrganization.get(organizationId);
  }

  set(organizationId: string, entry: OrgGovernance): void {
    if (this.#byOrganization.size >= MAX_CACHED) this.#byOrganization.clear();
    this.#byOrganization.set(organizationId, entry);
  }
}
