// sigil master-key create-pkcs11: makes the key-encryption key on the PKCS#11 token the
// configuration names (SIGIL_PKCS11_LIBRARY, _TOKEN_LABEL, _KEY_LABEL, the PIN from
// SIGIL_PKCS11_PIN or SIGIL_PKCS11_PIN_FILE): AES-256, sensitive, never extractable
// (docs/custody.md §1). Prints what the token says of it; the key itself never leaves the token.
import { loadConfig } from "../config.ts";
import { pkcs11Settings } from "../crypto/master-key-source.ts";
import { createTokenKey } from "../crypto/pkcs11/token.ts";

const USAGE = "usage: sigil master-key create-pkcs11 (with the SIGIL_PKCS11_* settings; docs/custody.md §1)";

export async function masterKey(argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action !== "create-pkcs11") throw new Error(USAGE);
  const config = loadConfig(process.env, rest);
  const settings = pkcs11Settings(config);
  const info = await createTokenKey(settings);
  process.stdout.write(`${JSON.stringify({ tokenLabel: settings.tokenLabel, keyLabel: settings.keyLabel, ...info })}\n`);
}
