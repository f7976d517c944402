import { Type, type Static } from "@sinclair/typebox";
import { maxItems } from "../../schemas/common.ts";
import {
  checkPrivateKeys,
  createPrivateKeys,
  MAX_PRIVATE_KEYS_PER_REQUEST,
  PrivateKeyParams,
  PrivateKeyResult,
} from "../../signing/private-keys.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  privateKeys: maxItems(PrivateKeyParams, "privateKeys", MAX_PRIVATE_KEYS_PER_REQUEST, 1),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const writer = { tx: ctx.tx, organizationId: ctx.organization.id, masterKey: ctx.services.masterKey, now: ctx.now };
  return { privateKeys: await createPrivateKeys(writer, p.privateKeys, "parameters.privateKeys") };
}

export const createPrivateKeysV2 = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2",
  // The SDK reads the V2 result under its versioned name.
  result: "createPrivateKeysResultV2",
  resource: "PRIVATE_KEY",
  action: "CREATE",
  kind: "CREATE_PRIVATE_KEYS",
  summary: "Create private keys (random, sealed at rest) with the addresses asked for (docs/signing.md §3).",
  params: Params,
  returns: Type.Object({ privateKeys: Type.Array(PrivateKeyResult) }),
  check: (p) => checkPrivateKeys(p.privateKeys, "parameters.privateKeys"),
  execute,
});
