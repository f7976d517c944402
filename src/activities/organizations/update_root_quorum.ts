import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { setRootQuorum } from "../../store/organizations.ts";
import { bumpPolicyVersion } from "../../store/policies.ts";
import { lockOrganization, lockUsers } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  threshold: Type.Integer({ minimum: 1, maximum: 100, errorMessage: "threshold must be a whole number from 1 to the number of userIds" }),
  userIds: maxItems(Id("user"), "userIds", 100, 1),
});
type P = Static<typeof Params>;

async function execute(ctx: ExecuteContext, p: P) {
  const { tx, organization, now } = ctx;
  // Before anything is read: concurrent replacements of the quorum then apply one after the
  // other (members and threshold of one request, never a blend).
  await lockOrganization(tx, organization.id);
  // The members must still exist when inserted: delete_users locks them exclusively, so it
  // either finished first (they are missing here) or waits and then sees them in the quorum.
  const found = new Set(await lockUsers(tx, organization.id, p.userIds, "shared"));
  const missing = p.userIds.filter((id) => !found.has(id));
  if (missing.length) throw notFound(`no user ${missing.join(", ")} in organization ${organization.id}`);
  await setRootQuorum(tx, organization.id, p.userIds);
  await tx
    .updateTable("organizations")
    .set({ root_quorum_threshold: p.threshold, updated_at: now })
    .where("id", "=", organization.id)
    .execute();
  await bumpPolicyVersion(tx, organization.id);
  return {};
}

const Result = Type.Object({});

export const updateRootQuorum = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM",
  resource: "ORGANIZATION",
  action: "UPDATE",
  kind: "UPDATE_ROOT_QUORUM",
  summary: "Replace the root quorum (threshold 1..N of existing users). Only the current root quorum can approve it.",
  params: Params,
  returns: Result,
  rootOnly: true,
  check(p) {
    if (new Set(p.userIds).size !== p.userIds.length) {
      throw invalid("userIds must not repeat a user", [{ field: "parameters.userIds", description: "must be unique" }]);
    }
    if (p.threshold > p.userIds.length) {
      throw invalid(`threshold ${p.threshold} exceeds the ${p.userIds.length} users of the quorum`, [
        { field: "parameters.threshold", description: "must be from 1 to the number of userIds" },
      ]);
    }
  },
  execute,
});
