// The Activity object as the SDK clients read it, built from a stored row. Answers, queries
// and webhook events all carry this view.
import type { Executor } from "../store/schema.ts";
import type { ActivityView } from "../schemas/views.ts";
import type { AppProof } from "../app-proofs/proofs.ts";
import { votesOf, type ActivityRow, type VoteRow } from "../store/activities.ts";
import { userViews, type UserRow, type UserView } from "../store/users.ts";
import type { MfaPolicyRow } from "../store/mfa-policies.ts";
import { json, timestampObject } from "../store/util.ts";
import { activityByType } from "../activities/registry.ts";
import { mapMessageSecrets, redactSecrets } from "../activities/secret-params.ts";
import { hasStandingVote } from "../policy/approval-window.ts";
import { decidingOrganization, voterStanding, type GovernanceCache } from "../governance/governance.ts";

/** The Activity object: its schema (schemas/views.ts) is the one the OpenAPI document shows. */
export type { ActivityView };

/**
 * Intent/result keys for a type, and its secret parameters (shown as the placeholder:
 * docs/activities.md §10.3); keys derived by convention for types no longer registered.
 */
function keysOf(type: string): { intent: string; result: string; secrets?: readonly string[] } {
  const def = activityByType(type);
  if (def) return { intent: def.intent, result: def.result, ...(def.secretParams ? { secrets: def.secretParams } : {}) };
  const m = /^ACTIVITY_TYPE_(.+?)(_V\d+)?$/.exec(type);
  const camel = (m?.[1] ?? "unknown").toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const v = m?.[2] ? m[2].slice(1) : "";
  return { intent: `${camel}Intent${v}`, result: `${camel}Result${v}` };
}

export interface KnownVotes {
  votes: readonly VoteRow[];
  voters: readonly UserRow[];
  /** The voters' User views, when the settling statement already read them (PostgreSQL). */
  voterViews?: UserView[];
  /** The voters' MFA policies, when the caller read them (a submission's gate): the settling statement reads none. */
  mfaPolicies?: ReadonlyMap<string, readonly MfaPolicyRow[]>;
}

function voteView(v: VoteRow, users: Map<string, UserView>, type: string, secrets: readonly string[]) {
  const user = users.get(v.user_id) ?? {
    // The voter was deleted since; keep the vote readable.
    userId: v.user_id,
    userName: "",
    authenticators: [],
    apiKeys: [],
    userTags: [],
    oauthProviders: [],
    createdAt: timestampObject(v.created_at),
    updatedAt: timestampObject(v.created_at),
    mfaPolicies: [],
  };
  return {
    id: v.id,
    userId: v.user_id,
    user,
    activityId: v.activity_id,
    selection: v.selection,
    message: mapMessageSecrets(v.message, type, secrets, (p) => redactSecrets(p, secrets)),
    publicKey: v.public_key,
    signature: v.signature,
    scheme: v.scheme,
    createdAt: timestampObject(v.created_at),
  };
}

// Activity timestamps are strings (the spec's Activity table): epoch milliseconds, the
// same unit as the request's timestampMs.
/**
 * canApprove / canReject for the caller: the activity awaits consensus, the caller may vote
 * on it (root quorum, initiator, or included in an applicable policy's consensus) and has
 * no live vote on it yet. Both are the same: whoever may approve may also reject.
 */
async function mayVoteOn(
  db: Executor,
  row: ActivityRow,
  votes: readonly VoteRow[],
  viewer: UserRow,
  now: number,
  governance?: GovernanceCache,
): Promise<boolean> {
  if (row.status !== "ACTIVITY_STATUS_CONSENSUS_NEEDED") return false;
  const orgId = decidingOrganization(row, votes);
  if (viewer.organization_id !== orgId || hasStandingVote(votes, viewer.id, now)) return false;
  return (await voterStanding(db, row, orgId, viewer, now, governance))?.eligible ?? false;
}

export async function activityViews(
  db: Executor,
  rows: readonly ActivityRow[],
  /** The rows' votes and voters when the caller already holds them (the submit path just wrote them). */
  known?: KnownVotes,
  /** The caller, for canApprove / canReject. */
  viewer?: UserRow,
  /** The store's governance cache (service state), for canApprove / canReject. */
  governance?: GovernanceCache,
): Promise<ActivityView[]> {
  const votes =
    known?.votes ??
    (await votesOf(
      db,
      rows.map((r) => r.id),
    ));
  const voterIds = [...new Set(votes.map((v) => v.user_id))];
  const voterRows =
    known?.voters ?? (voterIds.length ? await db.selectFrom("users").selectAll().where("id", "in", voterIds).execute() : []);
  const users = new Map((known?.voterViews ?? (await userViews(db, voterRows, known?.mfaPolicies))).map((u) => [u.userId, u]));
  const now = Date.now();
  const votesByRow = new Map(rows.map((r) => [r.id, votes.filter((v) => v.activity_id === r.id)]));
  const canVote = new Map<string, boolean>();
  if (viewer) {
    for (const r of rows) canVote.set(r.id, await mayVoteOn(db, r, votesByRow.get(r.id)!, viewer, now, governance));
  }
  return rows.map((r) => {
    const keys = keysOf(r.type);
    const result = json<Record<string, unknown>>(r.result);
    const failure = json<unknown>(r.failure);
    const appProofs = json<AppProof[]>(r.app_proofs);
    return {
      id: r.id,
      organizationId: r.organization_id,
      status: r.status,
      type: r.type,
      intent: {
        [keys.intent]: keys.secrets ? redactSecrets(json<Record<string, unknown>>(r.intent)!, keys.secrets) : json<unknown>(r.intent),
      },
      result: result ? { [keys.result]: result } : {},
      votes: votesByRow.get(r.id)!.map((v) => voteView(v, users, r.type, keys.secrets ?? [])),
      fingerprint: r.fingerprint,
      canApprove: canVote.get(r.id) ?? false,
      canReject: canVote.get(r.id) ?? false,
      createdAt: String(r.created_at),
      updatedAt: String(r.updated_at),
      ...(failure ? { failure } : {}),
      ...(appProofs ? { appProofs } : {}),
    };
  });
}

export async function activityView(
  db: Executor,
  row: ActivityRow,
  known?: KnownVotes,
  viewer?: UserRow,
  governance?: GovernanceCache,
): Promise<ActivityView> {
  return (await activityViews(db, [row], known, viewer, governance))[0]!;
}
