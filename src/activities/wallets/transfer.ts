// Export and import bundles of wallets and private keys (docs/export-import.md §2, §3): what
// @turnkey/crypto's decryptExportBundle opens and what its encryptWalletToBundle and
// encryptPrivateKeyToBundle produce. Both are signed by
// the BUNDLE_SIGNER service key. Inside the activity's transaction.
//
// Secrets: the plaintext (a mnemonic or a private key) exists only in memory here; the import
// target's private key is sealed with the master key bound to its id ("import-target:<id>")
// and deleted with its row once a bundle was opened with it. None of them is logged, returned
// in an error or stored plain.
import { randomBytes } from "node:crypto";
import { hpkeOpen, hpkeSeal, parseHpkeText, signedEnvelope, uncompressedP256 } from "../../crypto/bundles.ts";
import type { MasterKey } from "../../crypto/envelope.ts";
import { generateP256, p256FromPkcs8, toPkcs8 } from "../../crypto/p256.ts";
import type { ServiceKey } from "../../auth/service-keys.ts";
import type { ActivityServices } from "../define.ts";
import { findUser } from "../../store/users.ts";
import { invalid, notFound } from "../../errors.ts";
import { lockingRead } from "../../store/locks.ts";
import type { Tx } from "../../store/schema.ts";
import { AAD } from "../../crypto/aad.ts";

/** The `version` field of export and import bundles (the SDK does not read it). */
export const BUNDLE_VERSION = "v1.0.0";
/** How long an import target (init_import_wallet, init_import_private_key) accepts a bundle (our choice). */
export const IMPORT_TARGET_TTL_MS = 60 * 60 * 1000;
/** Bound on an encrypted import bundle's ciphertext (a 24-word mnemonic is under 256 bytes). */
const MAX_IMPORT_CIPHERTEXT_HEX = 4096;

/** The request's target public key as uncompressed hex, or a 400 naming `field`. */
export function targetKey(hex: string, field: string): string {
  const key = uncompressedP256(hex);
  if (!key) {
    throw invalid(`${field}: must be a P-256 public key in hex, uncompressed (04…, 130 digits) or compressed (02…/03…, 66 digits)`, [
      { field, description: "must be a P-256 public key (hex)" },
    ]);
  }
  return key;
}

/** The export bundle: `plaintext` HPKE-sealed to `target`, with the organization id, signed. */
export async function exportBundle(signer: ServiceKey, organizationId: string, target: string, plaintext: Uint8Array): Promise<string> {
  const { encappedPublic, ciphertext } = await hpkeSeal(target, plaintext);
  return JSON.stringify(signedEnvelope(signer.signer, { organizationId, encappedPublic, ciphertext }, BUNDLE_VERSION));
}

/** What a target receives: a mnemonic (import_wallet) or a raw private key (import_private_key). */
export type ImportKind = "WALLET" | "PRIVATE_KEY";
const INIT_OP: Record<ImportKind, string> = { WALLET: "init_import_wallet", PRIVATE_KEY: "init_import_private_key" };

const targetAad = AAD.importTarget;

/**
 * A new import target for (organization, user, kind), replacing any earlier one, and the
 * signed bundle announcing it (what encryptWalletToBundle checks before encrypting to it).
 */
export async function newImportTarget(
  tx: Tx,
  master: MasterKey,
  signer: ServiceKey,
  organizationId: string,
  userId: string,
  kind: ImportKind,
  now: number,
): Promise<string> {
  const key = generateP256();
  const id = `imt_${randomBytes(12).toString("base64url")}`;
  const row = {
    id,
    organization_id: organizationId,
    user_id: userId,
    kind,
    public_key: key.publicUncompressed,
    private_key_sealed: await master.seal(toPkcs8(key), targetAad(id)),
    expires_at: now + IMPORT_TARGET_TTL_MS,
    created_at: now,
  };
  // One target per owner: a second init replaces the first (the unique constraint makes two
  // concurrent inits end with one row, not an error).
  await tx
    .insertInto("import_targets")
    .values(row)
    .onConflict((oc) =>
      oc.columns(["organization_id", "user_id", "kind"]).doUpdateSet({
        id: row.id,
        public_key: row.public_key,
        private_key_sealed: row.private_key_sealed,
        expires_at: row.expires_at,
        created_at: row.created_at,
      }),
    )
    .execute();
  return JSON.stringify(signedEnvelope(signer.signer, { organizationId, userId, targetPublic: key.publicUncompressed }, BUNDLE_VERSION));
}

/** init_import_wallet / init_import_private_key: a new target for a user of the organization (404 for another). */
export async function initImport(
  tx: Tx,
  services: ActivityServices,
  organizationId: string,
  userId: string,
  kind: ImportKind,
  now: number,
): Promise<{ importBundle: string }> {
  if (!(await findUser(tx, organizationId, userId))) throw notFound(`no user ${userId} in organization ${organizationId}`);
  const signer = await services.serviceKey("BUNDLE_SIGNER");
  return { importBundle: await newImportTarget(tx, services.masterKey, signer, organizationId, userId, kind, now) };
}

/**
 * Opens `encryptedBundle` with the user's pending target and deletes the target (a bundle is
 * accepted once). The row lock makes a concurrent second import wait, then find nothing.
 * A user of another organization is a 404. Errors name `field` and never the plaintext.
 */
export async function takeImportTarget(
  tx: Tx,
  master: MasterKey,
  organizationId: string,
  userId: string,
  kind: ImportKind,
  encryptedBundle: string,
  field: string,
  now: number,
): Promise<Uint8Array> {
  if (!(await findUser(tx, organizationId, userId))) throw notFound(`no user ${userId} in organization ${organizationId}`);
  const q = tx
    .selectFrom("import_targets")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where("user_id", "=", userId)
    .where("kind", "=", kind);
  const row = await lockingRead(tx, q).executeTakeFirst();
  if (!row) {
    throw notFound(
      `no pending import for user ${userId} in organization ${organizationId}: call ${INIT_OP[kind]} first (each import bundle is accepted once)`,
    );
  }
  if (Number(row.expires_at) <= now) {
    throw invalid(`${field}: the import bundle of user ${userId} expired; call ${INIT_OP[kind]} again`, [
      { field, description: "the import target expired" },
    ]);
  }
  const parsed = parseHpkeText(encryptedBundle, MAX_IMPORT_CIPHERTEXT_HEX, "encryptWalletToBundle");
  if ("problem" in parsed) throw invalid(`${field}: ${parsed.problem}`, [{ field, description: parsed.problem }]);
  const der = await master.open(row.private_key_sealed, targetAad(row.id));
  let plain: Uint8Array;
  try {
    plain = await hpkeOpen(p256FromPkcs8(der), parsed.enc, parsed.ct);
  } catch {
    throw invalid(
      `${field}: could not be decrypted with user ${userId}'s import target (was it encrypted to the latest ${INIT_OP[kind]} bundle?)`,
      [{ field, description: "not encrypted to the pending import target" }],
    );
  } finally {
    der.fill(0);
  }
  await tx.deleteFrom("import_targets").where("id", "=", row.id).execute();
  return plain;
}
