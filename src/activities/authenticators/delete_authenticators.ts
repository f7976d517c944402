import { Type, type Static } from "@sinclair/typebox";
import { isRootUser } from "../../store/organizations.ts";
import { notFound, precondition } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { lockUsers } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({ userId: Id("user"), authenticatorIds: maxItems(Id("authenticator"), "authenticatorIds", 100, 1) });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization } = ctx;
  // As delete_api_keys: the user's lock makes the "last credential of a root user" check and
  // the delete one step against concurrent credential writers of this user.
  const [userId] = await lockUsers(tx, organization.id, [p.userId]);
  if (!userId) throw notFound(`no user ${p.userId} in organization ${organization.id}`);
  const authenticatorIds = [...new Set(p.authenticatorIds)];
  const own = new Set((await tx.selectFrom("authenticators").select("id").where("user_id", "=", userId).execute()).map((a) => a.id));
  const missing = authenticatorIds.filter((id) => !own.has(id));
  if (missing.length) throw notFound(`user ${userId} has no authenticator ${missing.join(", ")}`);
  if (own.size === authenticatorIds.length) {
    const [root, keys] = await Promise.all([
      isRootUser(tx, organization.id, userId),
      tx.selectFrom("api_keys").select("id").where("user_id", "=", userId).where("expires_at", "is", null).executeTakeFirst(),
    ]);
    // A root user with no lasting credential can never vote again; refuse to lock the org out.
    if (root && !keys) throw precondition(`refusing to delete the last credential of root user ${userId}; add another credential first`);
  }
  await tx.deleteFrom("authenticators").where("id", "in", authenticatorIds).execute();
  return { authenticatorIds };
}

export const deleteAuthenticators = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_AUTHENTICATORS",
  resource: "CREDENTIAL",
  action: "DELETE",
  kind: "DELETE_AUTHENTICATORS",
  summary: "Delete passkeys of a user. A root user's last lasting credential (passkey or non-expiring API key) cannot be deleted.",
  params: Params,
  returns: Type.Object({ authenticatorIds: Type.Array(Type.String()) }),
  implicitlyAllowed: (p, actor) => p.userId === actor.userId,
  execute,
});
