// recover_user (docs/logins.md §6.5): a user who lost their passkeys adds a new one to
// `userId`. Without a policy only that user may submit it (implicitlyAllowed below: the
// "own credentials" permission) — in practice stamped by a session key from an OTP login;
// anyone else needs a policy allowing resource USER, action UPDATE.
import { Type, type Static } from "@sinclair/typebox";
import { Id } from "../../schemas/common.ts";
import { AuthenticatorParamsV2 } from "../users/user-schemas.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { addAuthenticators } from "./add-authenticators.ts";
import { verifyRegistration } from "../../logins/passkey/registration.ts";

const Params = Type.Object({ authenticator: AuthenticatorParamsV2, userId: Id("user") });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const credential = await verifyRegistration(p.authenticator, ctx.services.logins.webauthn, "parameters.authenticator");
  const authenticatorId = await addAuthenticators(ctx.tx, ctx.organization.id, p.userId, [credential], ctx.now, "parameters.authenticator");
  return { authenticatorId };
}

export const recoverUser = defineActivity({
  type: "ACTIVITY_TYPE_RECOVER_USER",
  resource: "USER",
  action: "UPDATE",
  kind: "RECOVER_USER",
  summary: "Add a passkey to the requesting user (account recovery, stamped by the user's own session key).",
  params: Params,
  returns: Type.Object({ authenticatorId: Type.Array(Type.String(), { description: "the id of the created authenticator (one)" }) }),
  implicitlyAllowed: (p, actor) => p.userId === actor.userId,
  execute,
});
