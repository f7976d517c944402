import { Type, type Static } from "@sinclair/typebox";
import { Id, maxItems } from "../../schemas/common.ts";
import { AuthenticatorParamsV2, MAX_AUTHENTICATORS_PER_REQUEST } from "../users/user-schemas.ts";
import { defineActivity, type Actor, type ExecuteContext } from "../define.ts";
import { addAuthenticators, verifyRegistrations } from "./add-authenticators.ts";

const Params = Type.Object({
  authenticators: maxItems(AuthenticatorParamsV2, "authenticators", MAX_AUTHENTICATORS_PER_REQUEST, 1),
  userId: Id("user"),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const credentials = await verifyRegistrations(p.authenticators, ctx.services.logins.webauthn, "parameters.authenticators");
  const authenticatorIds = await addAuthenticators(
    ctx.tx,
    ctx.organization.id,
    p.userId,
    credentials,
    ctx.now,
    "parameters.authenticators",
  );
  return { authenticatorIds };
}

export const createAuthenticatorsV2 = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
  resource: "CREDENTIAL",
  action: "CREATE",
  kind: "CREATE_AUTHENTICATORS",
  summary: "Register passkeys (WebAuthn authenticators) for a user; at most 10 per user.",
  params: Params,
  returns: Type.Object({ authenticatorIds: Type.Array(Type.String()) }),
  // docs/policy-language.md §6.8: a user may add passkeys to itself unless a policy says otherwise.
  implicitlyAllowed: (p, actor: Actor) => p.userId === actor.userId,
  execute,
});
