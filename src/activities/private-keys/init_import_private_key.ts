import { Type, type Static } from "@sinclair/typebox";
import { Id } from "../../schemas/common.ts";
import { initImport } from "../wallets/transfer.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({ userId: Id("user") });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  return initImport(ctx.tx, ctx.services, ctx.organization.id, p.userId, "PRIVATE_KEY", ctx.now);
}

export const initImportPrivateKey = defineActivity({
  type: "ACTIVITY_TYPE_INIT_IMPORT_PRIVATE_KEY",
  resource: "PRIVATE_KEY",
  action: "IMPORT",
  kind: "INIT_IMPORT_PRIVATE_KEY",
  summary:
    "Start a private key import: a fresh encryption target for the user, signed by the BUNDLE_SIGNER key (docs/export-import.md §3).",
  params: Params,
  returns: Type.Object({ importBundle: Type.String() }),
  execute,
});
