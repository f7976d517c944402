import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { findUser } from "../../store/users.ts";
import { newImportTarget } from "../../wallets/transfer.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({ userId: Id("user") });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, services, now } = ctx;
  if (!(await findUser(tx, organization.id, p.userId))) throw notFound(`no user ${p.userId} in organization ${organization.id}`);
  const signer = await services.serviceKey("BUNDLE_SIGNER");
  return { importBundle: await newImportTarget(tx, services.masterKey, signer, organization.id, p.userId, "PRIVATE_KEY", now) };
}

export const initImportPrivateKey = defineActivity({
  type: "ACTIVITY_TYPE_INIT_IMPORT_PRIVATE_KEY",
  resource: "PRIVATE_KEY",
  action: "IMPORT",
  kind: "INIT_IMPORT_PRIVATE_KEY",
  summary: "Start a private key import: a fresh encryption target for the user, signed by the BUNDLE_SIGNER key (docs/export-import.md §3).",
  params: Params,
  returns: Type.Object({ importBundle: Type.String() }),
  execute,
});
