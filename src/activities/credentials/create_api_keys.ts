import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { ApiKeyParamsV1, ApiKeyParamsV2, Id, maxItems } from "../../schemas/common.ts";
import { findUser } from "../../store/users.ts";
import { defineActivity, type Actor, type ExecuteContext } from "../define.ts";
import { addApiKeys, type NewApiKey } from "./api-keys.ts";
import { organizationsAbove, refuseAncestorKeys } from "./ancestor-keys.ts";

const params = <K extends TSchema>(key: K) => Type.Object({ apiKeys: maxItems(key, "apiKeys", 10, 1), userId: Id("user") });
const ParamsV2 = params(ApiKeyParamsV2);
const ParamsV1 = params(ApiKeyParamsV1);

async function execute(ctx: ExecuteContext, p: Static<typeof ParamsV2> | Static<typeof ParamsV1>) {
  const user = await findUser(ctx.tx, ctx.organization.id, p.userId);
  if (!user) throw notFound(`no user ${p.userId} in organization ${ctx.organization.id}`);
  const above = await organizationsAbove(ctx.tx, ctx.organization.id, ctx.chains);
  await refuseAncestorKeys(
    ctx.tx,
    above,
    ctx.actor.organizationId,
    p.apiKeys.map((k, i) => ({ publicKey: k.publicKey, field: `parameters.apiKeys[${i}].publicKey` })),
  );
  const apiKeyIds = await addApiKeys(ctx.tx, ctx.organization.id, user.id, p.apiKeys as NewApiKey[], ctx.now, "parameters.apiKeys");
  return { apiKeyIds };
}

const Result = Type.Object({ apiKeyIds: Type.Array(Type.String()) });

const common = {
  resource: "CREDENTIAL",
  action: "CREATE",
  kind: "CREATE_API_KEYS",
  returns: Result,
  policyParams: (p: { userId: string }) => ({ user_id: p.userId }),
  // docs/policy-language.md §6.8: a user may add keys to itself unless a policy says otherwise.
  implicitlyAllowed: (p: { userId: string }, actor: Actor) => p.userId === actor.userId,
  execute,
};

export const createApiKeysV2 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
  params: ParamsV2,
  summary: "Add API keys (P-256, secp256k1 or Ed25519; optionally expiring) to a user.",
});

export const createApiKeysV1 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_CREATE_API_KEYS",
  params: ParamsV1,
  summary: "Add P-256 API keys to a user (the version older clients send).",
});
