// create_read_only_session (docs/sessions-and-network.md §7.2): a token that lets the submitting
// user read — @turnkey/sdk-browser sends it as X-Session (auth/read-only-session.ts) — and do
// nothing else. Valid for an hour (upstream), or the configured session maximum if shorter.
import { randomUUID } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { READ_ONLY_SESSION_SECONDS, READ_ONLY_SESSION_TYPE, signReadOnlySession } from "../../auth/read-only-session.ts";
import { defineActivity } from "../define.ts";

export const createReadOnlySession = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION",
  // Upstream maps no resource or action for it: ours, as for the other session activities.
  resource: "AUTH",
  action: "CREATE",
  kind: "CREATE_READ_ONLY_SESSION",
  summary: "Create a read-only session for the submitting user: a token (sent as X-Session) valid for one hour that may only query.",
  params: Type.Object({}),
  returns: Type.Object({
    organizationId: Type.String(),
    organizationName: Type.String(),
    userId: Type.String(),
    username: Type.String(),
    session: Type.String({ description: "the read-only session token, sent as the X-Session header" }),
    sessionExpiry: Type.String({ description: "expiry, epoch seconds" }),
  }),
  // A user reading its own organization needs no policy (docs/policy-language.md §6.8).
  implicitlyAllowed: () => true,
  async execute(ctx) {
    const { actor } = ctx;
    const exp = Math.floor(ctx.now / 1000) + Math.min(READ_ONLY_SESSION_SECONDS, ctx.services.logins.sessionMaxSeconds);
    // Bound to the IP allowlist of the key that asked for it, as a login session is (docs/sessions-and-network.md §1).
    const allowlistKey = ctx.caller?.publicKey;
    const session = signReadOnlySession(await ctx.services.serviceKey("SESSION_JWT"), {
      exp,
      jti: randomUUID(),
      session_type: READ_ONLY_SESSION_TYPE,
      user_id: actor.userId,
      organization_id: actor.organizationId,
      ...(allowlistKey ? { allowlist_public_key: allowlistKey.toLowerCase() } : {}),
    });
    return {
      organizationId: actor.organizationId,
      organizationName: actor.organizationName,
      userId: actor.userId,
      username: actor.userName,
      session,
      sessionExpiry: String(exp),
    };
  },
});
