// sigil master-key create-pkcs11: makes the key-encryption key on the PKCS#11 token the
// configuration names (SIGIL_PKCS11_LIBRARY, _TOKEN_LABEL, _KEY_LABEL, the PIN from
// SIGIL_PKCS11_PIN or SIGIL_PKCS11_PIN_FILE): AES-256, sensitive, never extractable
// (docs/custody.md §1). Prints what the token says of it; the key itself never leaves the token.
//
// sigil master-key rotate: re-wraps every stored data key under the configured key, the
// previous one given by SIGIL_MASTER_KEY_PREVIOUS or SIGIL_PKCS11_PREVIOUS_KEY_LABEL
// (docs/custody.md §4); prints what it did and whether the previous key may now be destroyed.
import { loadConfig } from "../config.ts";
import { pkcs11Settings } from "../crypto/master-key-source.ts";
import { createTokenKey } from "../crypto/pkcs11/token.ts";
import { rotateSealed } from "../crypto/rotate.ts";
import { openService } from "../service.ts";

const USAGE = "usage: sigil master-key create-pkcs11 | rotate [--batch-rows N] (docs/custody.md §1, §4)";

export async function masterKey(argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action === "rotate") return rotate(rest);
  if (action !== "create-pkcs11") throw new Error(USAGE);
  const config = loadConfig(process.env, rest);
  const settings = pkcs11Settings(config);
  const info = await createTokenKey(settings);
  process.stdout.write(`${JSON.stringify({ tokenLabel: settings.tokenLabel, keyLabel: settings.keyLabel, ...info })}\n`);
}

async function rotate(argv: string[]): Promise<void> {
  // --batch-rows N: rows per batch (default ROTATE_BATCH_ROWS); each batch's progress is a JSON line on stderr.
  const at = argv.indexOf("--batch-rows");
  const batchRows = at >= 0 ? Number(argv[at + 1]) : undefined;
  if (batchRows !== undefined && !(Number.isInteger(batchRows) && batchRows >= 1 && batchRows <= 10_000))
    throw new Error("--batch-rows must be an integer from 1 to 10000");
  const service = await openService(at >= 0 ? [...argv.slice(0, at), ...argv.slice(at + 2)] : argv);
  try {
    if (service.masterKey.kekIds.length === service.masterKey.sealingIds.length) {
      throw new Error("nothing to rotate from: set SIGIL_MASTER_KEY_PREVIOUS or SIGIL_PKCS11_PREVIOUS_KEY_LABEL to the previous key");
    }
    const report = await rotateSealed(service.store.db, service.masterKey, {
      ...(batchRows ? { batchRows } : {}),
      onBatch: (kind, rows) => process.stderr.write(`${JSON.stringify({ kind, rows })}\n`),
    });
    process.stdout.write(`${JSON.stringify({ keyId: service.masterKey.id, ...report })}\n`);
    if (!report.done) process.exitCode = 1;
  } finally {
    await service.store.close();
    await service.masterKey.close();
  }
}
