import { Type, type Static } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { Id, Name, maxItems } from "../../schemas/common.ts";
import { checkPrivateKeys, createPrivateKeys, PrivateKeyResult } from "../../signing/private-keys.ts";
import { keyPairOf, type SigningCurve } from "../../signing/sign.ts";
import { WalletCurveSchema } from "../../wallets/accounts.ts";
import { takeImportTarget } from "../wallets/transfer.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  userId: Id("user"),
  privateKeyName: Name("privateKeyName"),
  encryptedBundle: Type.String({ minLength: 1, maxLength: 8192, errorMessage: "must be the JSON text encryptPrivateKeyToBundle returns" }),
  curve: WalletCurveSchema,
  addressFormats: maxItems(
    Type.String({ minLength: 1, maxLength: 64, errorMessage: "must be an ADDRESS_FORMAT_* value" }),
    "addressFormats",
    10,
  ),
});

const asNew = (p: Static<typeof Params>) => ({
  privateKeyName: p.privateKeyName,
  curve: p.curve,
  privateKeyTags: [],
  addressFormats: p.addressFormats,
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, services, now } = ctx;
  const plain = await takeImportTarget(
    tx,
    services.masterKey,
    organization.id,
    p.userId,
    "PRIVATE_KEY",
    p.encryptedBundle,
    "parameters.encryptedBundle",
    now,
  );
  try {
    const pair = keyPairOf(p.curve as SigningCurve, plain);
    if (!pair) {
      throw invalid(
        `parameters.encryptedBundle: the decrypted content is not a ${p.curve} private key (32 bytes${p.curve === "CURVE_SECP256K1" ? ", below the group order" : ""})`,
        [{ field: "parameters.encryptedBundle", description: `must hold a ${p.curve} private key` }],
      );
    }
    const writer = { tx, organizationId: organization.id, masterKey: services.masterKey, now };
    const [made] = await createPrivateKeys(writer, [asNew(p)], "parameters", pair);
    return made!;
  } finally {
    plain.fill(0);
  }
}

export const importPrivateKey = defineActivity({
  type: "ACTIVITY_TYPE_IMPORT_PRIVATE_KEY",
  resource: "PRIVATE_KEY",
  action: "IMPORT",
  kind: "IMPORT_PRIVATE_KEY",
  summary:
    "Import a private key encrypted to the user's init_import_private_key target (docs/export-import.md §3); each target is used once.",
  params: Params,
  returns: PrivateKeyResult,
  check: (p) => checkPrivateKeys([asNew(p)], "parameters"),
  execute,
});
