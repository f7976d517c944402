import { Type, type Static } from "@sinclair/typebox";
import { invalid, notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { lockingRead } from "../../store/locks.ts";
import { deletePrivateKeyRows } from "../../signing/private-keys.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  privateKeyIds: maxItems(Id("private key"), "privateKeyIds", 100, 1),
  // As delete_wallets: a key never exported is deleted only with it (it is lost for good).
  deleteWithoutExport: Type.Optional(Type.Boolean()),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization } = ctx;
  const ids = [...new Set(p.privateKeyIds)].sort();
  const q = tx
    .selectFrom("private_keys")
    .select(["id", "exported"])
    .where("organization_id", "=", organization.id)
    .where("id", "in", ids)
    .orderBy("id");
  const rows = await lockingRead(tx, q).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = p.privateKeyIds.findIndex((id) => !byId.has(id));
  if (missing >= 0)
    throw notFound(`parameters.privateKeyIds[${missing}]: no private key ${p.privateKeyIds[missing]} in organization ${organization.id}`);
  const unexported = p.privateKeyIds.findIndex((id) => byId.get(id)!.exported !== 1);
  if (unexported >= 0 && p.deleteWithoutExport !== true) {
    throw invalid(
      `parameters.privateKeyIds[${unexported}]: private key ${p.privateKeyIds[unexported]} has not been exported; deleting it loses it for good: set deleteWithoutExport to true`,
      [{ field: "parameters.deleteWithoutExport", description: "must be true to delete private keys that were never exported" }],
    );
  }
  await deletePrivateKeyRows(tx, ids);
  return { privateKeyIds: p.privateKeyIds.filter((id, i) => p.privateKeyIds.indexOf(id) === i) };
}

export const deletePrivateKeys = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_PRIVATE_KEYS",
  resource: "PRIVATE_KEY",
  action: "DELETE",
  kind: "DELETE_PRIVATE_KEYS",
  summary: "Delete private keys (deleteWithoutExport must be true for keys never exported).",
  params: Params,
  returns: Type.Object({ privateKeyIds: Type.Array(Type.String()) }),
  execute,
});
