// The 24-hour approval window (docs/policy-language.md §6.6, docs/consensus.md §4): the first approval opens a window;
// approvals count only while the window they fell in is open. Once it closes they all
// expire together (they stay on the activity for audit), and the next approval opens a
// new window. Rejections never expire. Derived from the votes alone: nothing to store.

export const APPROVAL_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface VoteLike {
  user_id: string;
  selection: string;
  created_at: number;
}

/** Approvals that still count at `nowMs`, one per user, in order of first approval. Votes must be in time order. */
export function liveApprovals<V extends VoteLike>(votes: readonly V[], nowMs: number): V[] {
  let start = Number.NEGATIVE_INFINITY;
  let current: V[] = [];
  for (const v of votes) {
    if (v.selection !== "VOTE_SELECTION_APPROVED") continue;
    if (v.created_at - start >= APPROVAL_WINDOW_MS) {
      start = v.created_at;
      current = [];
    }
    if (!current.some((c) => c.user_id === v.user_id)) current.push(v);
  }
  return nowMs - start >= APPROVAL_WINDOW_MS ? [] : current;
}

/** The user has a vote that still stands: a rejection, or an approval in the open window. */
export function hasStandingVote<V extends VoteLike>(votes: readonly V[], userId: string, nowMs: number): boolean {
  if (votes.some((v) => v.user_id === userId && v.selection === "VOTE_SELECTION_REJECTED")) return true;
  return liveApprovals(votes, nowMs).some((v) => v.user_id === userId);
}
