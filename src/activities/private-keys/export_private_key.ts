import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id } from "../../schemas/common.ts";
import { lockingRead } from "../../store/locks.ts";
import { openPrivateKey } from "../../signing/private-keys.ts";
import { exportBundle, targetKey } from "../wallets/transfer.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  privateKeyId: Id("private key"),
  targetPublicKey: Type.String({ minLength: 1, maxLength: 200, errorMessage: "must be a P-256 public key (hex)" }),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, services, now } = ctx;
  const target = targetKey(p.targetPublicKey, "parameters.targetPublicKey");
  const q = tx
    .selectFrom("private_keys")
    .select(["id", "key_sealed"])
    .where("organization_id", "=", organization.id)
    .where("id", "=", p.privateKeyId.toLowerCase());
  const row = await lockingRead(tx, q).executeTakeFirst();
  if (!row) throw notFound(`no private key ${p.privateKeyId} in organization ${organization.id}`);
  const key = await openPrivateKey(services.masterKey, row);
  let bundle: string;
  try {
    bundle = await exportBundle(await services.serviceKey("BUNDLE_SIGNER"), organization.id, target, key);
  } finally {
    key.fill(0);
  }
  await tx.updateTable("private_keys").set({ exported: 1, updated_at: now }).where("id", "=", row.id).execute();
  return { privateKeyId: row.id, exportBundle: bundle };
}

export const exportPrivateKey = defineActivity({
  type: "ACTIVITY_TYPE_EXPORT_PRIVATE_KEY",
  resource: "PRIVATE_KEY",
  action: "EXPORT",
  kind: "EXPORT_PRIVATE_KEY",
  summary:
    "Export a private key, HPKE-encrypted to the caller's target key and signed by the BUNDLE_SIGNER key (docs/export-import.md §2).",
  params: Params,
  returns: Type.Object({ privateKeyId: Type.String(), exportBundle: Type.String() }),
  policyPrivateKey: (p) => p.privateKeyId,
  check: (p) => void targetKey(p.targetPublicKey, "parameters.targetPublicKey"),
  execute,
});
