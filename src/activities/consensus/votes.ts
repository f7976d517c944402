import { Type } from "@sinclair/typebox";
import { defineVote } from "../define.ts";

const Params = Type.Object({
  fingerprint: Type.String({ minLength: 1, maxLength: 128, errorMessage: "fingerprint must be the fingerprint of an activity" }),
});

export const approveActivity = defineVote({
  type: "ACTIVITY_TYPE_APPROVE_ACTIVITY",
  summary: "Approve an activity awaiting consensus (by fingerprint). Answers with the target activity, re-evaluated.",
  selection: "VOTE_SELECTION_APPROVED",
  params: Params,
});

export const rejectActivity = defineVote({
  type: "ACTIVITY_TYPE_REJECT_ACTIVITY",
  summary: "Reject an activity awaiting consensus (by fingerprint). One accepted rejection is final.",
  selection: "VOTE_SELECTION_REJECTED",
  params: Params,
});
