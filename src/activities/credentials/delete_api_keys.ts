import { Type, type Static } from "@sinclair/typebox";
import { isRootUser } from "../../store/organizations.ts";
import { notFound, precondition } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { lockUsers } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({ userId: Id("user"), apiKeyIds: maxItems(Id("api key"), "apiKeyIds", 100, 1) });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization } = ctx;
  // "A root user keeps its last key" reads the user's keys and the quorum, then deletes. The
  // user's lock makes two deletes of its last two keys run one after the other (neither sees
  // the other key still there), and waits for an update_root_quorum making it a root (that
  // one holds the user shared), so the quorum read below is current.
  const [userId] = await lockUsers(tx, organization.id, [p.userId]);
  if (!userId) throw notFound(`no user ${p.userId} in organization ${organization.id}`);
  const user = { id: userId };
  const apiKeyIds = [...new Set(p.apiKeyIds)];
  const keys = await tx.selectFrom("api_keys").select(["id", "expires_at"]).where("user_id", "=", user.id).execute();
  const own = new Set(keys.map((k) => k.id));
  const missing = apiKeyIds.filter((id) => !own.has(id));
  if (missing.length) throw notFound(`user ${user.id} has no api key ${missing.join(", ")}`);
  // What would remain that lasts: a non-expiring key, or a passkey (sessions expire).
  const deleting = new Set(apiKeyIds);
  const lastingKeyLeft = keys.some((k) => !deleting.has(k.id) && k.expires_at === null);
  if (!lastingKeyLeft) {
    const [root, passkey] = await Promise.all([
      isRootUser(tx, organization.id, user.id),
      tx.selectFrom("authenticators").select("id").where("user_id", "=", user.id).executeTakeFirst(),
    ]);
    // A root user with no lasting credential can never vote again; refuse to lock the org out.
    if (root && !passkey)
      throw precondition(
        `refusing to delete the last lasting credential of root user ${user.id} (a non-expiring api key or a passkey); add another credential first`,
      );
  }
  await tx.deleteFrom("api_keys").where("id", "in", apiKeyIds).execute();
  return { apiKeyIds };
}

const Result = Type.Object({ apiKeyIds: Type.Array(Type.String()) });

export const deleteApiKeys = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_API_KEYS",
  resource: "CREDENTIAL",
  action: "DELETE",
  kind: "DELETE_API_KEYS",
  summary: "Delete API keys of a user. A root user's last lasting credential (non-expiring API key or passkey) cannot be deleted.",
  params: Params,
  returns: Result,
  policyParams: (p) => ({ user_id: p.userId, api_key_ids: p.apiKeyIds }),
  implicitlyAllowed: (p, actor) => p.userId === actor.userId,
  execute,
});
