// The I/O edge of app proofs: gathers what a policy-outcome proof commits to.
import type { MasterKey } from "../crypto/envelope.ts";
import type { Decision } from "../policy/engine.ts";
import { appProofKey, policyOutcomeProof, type AppProof } from "../app-proofs/proofs.ts";
import { organizationChain } from "../store/organizations.ts";
import type { Executor } from "../store/schema.ts";
import type { VoteRow } from "../store/activities.ts";
import type { ServiceState } from "../service-state.ts";
import { governance, type OrgGovernance } from "../governance/governance.ts";

function organizationData(organizationId: string, gov: OrgGovernance) {
  return {
    organizationId,
    policySetId: gov.setId,
    rootQuorum: { userIds: [...gov.quorum.userIds].sort(), threshold: gov.quorum.threshold },
  };
}

export interface ProofRequest {
  activity: { id: string; type: string; fingerprint: string; organizationId: string };
  decision: Decision;
  /** The deciding organization and its policy state. */
  organizationId: string;
  gov: OrgGovernance;
  /** The approvals the decision was taken over (the submitter's stamp included). */
  approvals: readonly Pick<VoteRow, "id" | "user_id" | "public_key" | "scheme">[];
  now: number;
}

export async function outcomeProof(state: ServiceState, db: Executor, master: MasterKey, r: ProofRequest): Promise<AppProof> {
  const [, parentId] = await organizationChain(db, r.organizationId, state.chains);
  const parent = parentId ? organizationData(parentId, await governance(state.governance, db, parentId)) : undefined;
  return policyOutcomeProof(await appProofKey(state.appProofKey, db, master), {
    organizationId: r.activity.organizationId,
    outcome: r.decision.outcome,
    decisionContext: {
      activityId: r.activity.id,
      activityType: r.activity.type,
      fingerprint: r.activity.fingerprint,
      voteIds: r.approvals.map((v) => v.id),
      policyEvaluations: r.decision.policies.map((p) => ({ policyId: p.policyId, outcome: p.outcome })),
    },
    organizationData: organizationData(r.organizationId, r.gov),
    parentOrganizationData: parent,
    userRequestApprovals: r.approvals.map((v) => ({ userId: v.user_id, publicKey: v.public_key, scheme: v.scheme })),
    timestampMs: r.now,
  });
}

/**
 * Opens the signing key — creating and storing it on first use — outside any activity's
 * transaction. settle() signs inside one, and a key first created there would vanish with
 * an activity rolled back while this process went on signing with it.
 */
export async function openProofKey(state: ServiceState, db: Executor, master: MasterKey): Promise<void> {
  await appProofKey(state.appProofKey, db, master);
}
