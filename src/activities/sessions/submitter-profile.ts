// A scoped session cannot shed its scope (docs/sessions-and-network.md §6.3): every activity
// that makes a new session key — create_read_write_session and the credential-bundle logins
// (email_auth, otp_auth, oauth) — gives it the session profile of the credential that
// submitted it, so a session issued under a profile never mints one without it.
import { precondition } from "../../errors.ts";
import type { ExecuteContext } from "../define.ts";

const SESSION_KEY_TYPES: ReadonlySet<string> = new Set(["CREDENTIAL_TYPE_LOGIN", "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256"]);

/**
 * The session profile of the credential that submitted the activity. At submission the key
 * that stamped is the actor's; on a later approval it is read from the submitter's vote — and a
 * session key gone meanwhile cannot say which scope it had, so the activity is refused.
 */
export async function submitterProfile(ctx: ExecuteContext<unknown>): Promise<string | undefined> {
  if (ctx.actor.stampPublicKey) {
    const key = await ctx.tx
      .selectFrom("api_keys")
      .select("session_profile_id")
      .where("user_id", "=", ctx.actor.userId)
      .where("public_key_normalized", "=", ctx.actor.stampPublicKey.toLowerCase())
      .executeTakeFirst();
    return key?.session_profile_id ?? undefined;
  }
  const vote = await ctx.tx
    .selectFrom("votes")
    .select(["credential_id", "credential_type"])
    .where("activity_id", "=", ctx.activityId)
    .where("user_id", "=", ctx.actor.userId)
    .orderBy("created_at")
    .orderBy("id")
    .executeTakeFirst();
  if (!vote || !SESSION_KEY_TYPES.has(vote.credential_type)) return undefined;
  const key = await ctx.tx.selectFrom("api_keys").select("session_profile_id").where("id", "=", vote.credential_id).executeTakeFirst();
  if (!key) throw precondition("the session that submitted this activity has ended: a new session cannot be made on its behalf");
  return key.session_profile_id ?? undefined;
}
