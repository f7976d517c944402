// Step 6 of the pipeline: may this actor perform this activity?
//
// Until the policy engine lands, the rule is the root quorum alone: a member of the root
// quorum of the actor's own organization (the target or an ancestor of it) may act when
// that quorum's threshold is 1. Everyone else is denied. The policy engine will replace
// `decide` and keep its shape: a decision plus a human-readable reason.
import type { Db } from "../store/schema.ts";
import { rootQuorumMembership } from "../store/organizations.ts";
import type { Actor } from "../activities/define.ts";

export type Decision = { outcome: "ALLOW" } | { outcome: "DENY"; reason: string };

export async function decide(db: Db, actor: Actor): Promise<Decision> {
  const quorum = await rootQuorumMembership(db, actor.organizationId, actor.userId);
  if (!quorum?.member) {
    return {
      outcome: "DENY",
      reason: `user ${actor.userId} is not in the root quorum of organization ${actor.organizationId}, and no policy allows this activity`,
    };
  }
  if (quorum.threshold > 1) {
    return {
      outcome: "DENY",
      reason: `the root quorum of organization ${actor.organizationId} needs ${quorum.threshold} approvals; multi-approval consensus is not available yet`,
    };
  }
  return { outcome: "ALLOW" };
}
