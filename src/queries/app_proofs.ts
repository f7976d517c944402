// list_app_proofs (SDK types v1GetAppProofsRequest / v1GetAppProofsResponse): the app proofs an
// activity carries (docs/activities.md §6): one per decision when the submission asked for them
// (generateAppProofs), none otherwise.
import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { AppProof } from "../schemas/views.ts";
import { findActivity } from "../store/activities.ts";
import { json } from "../store/util.ts";
import type { AppProof as SignedProof } from "../app-proofs/proofs.ts";
import { defineQuery } from "./define.ts";

export const listAppProofs = defineQuery({
  op: "list_app_proofs",
  summary: "The app proofs of an activity (empty when its submission did not ask for them).",
  request: Type.Object({ organizationId: OrganizationId, activityId: Id("activity") }),
  response: Type.Object({ appProofs: Type.Array(AppProof) }),
  async run({ db, organization }, req) {
    const row = await findActivity(db, req.activityId);
    if (!row || row.organization_id !== organization.id) {
      throw notFound(`no activity ${req.activityId} in organization ${organization.id}`);
    }
    return { appProofs: json<SignedProof[]>(row.app_proofs) ?? [] };
  },
});
