import { Type, type Static } from "@sinclair/typebox";
import { Id } from "../../schemas/common.ts";
import { initImport } from "./transfer.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({ userId: Id("user") });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  return initImport(ctx.tx, ctx.services, ctx.organization.id, p.userId, "WALLET", ctx.now);
}

export const initImportWallet = defineActivity({
  type: "ACTIVITY_TYPE_INIT_IMPORT_WALLET",
  resource: "WALLET",
  action: "IMPORT",
  kind: "INIT_IMPORT_WALLET",
  summary: "Start a wallet import: a fresh encryption target for the user, signed by the BUNDLE_SIGNER key (docs/export-import.md §3).",
  params: Params,
  returns: Type.Object({ importBundle: Type.String() }),
  execute,
});
