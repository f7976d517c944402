// A real SoftHSM2 token for the custody tests (docs/custody.md §6): its own configuration and
// token directory in a temp dir, initialised with softhsm2-util, the key-encryption key made by
// `sigil master-key create-pkcs11`. "Unplugging" moves the token directory away (the tests run as
// root, for whom a mode-000 directory is still readable), "plugging" moves it back.
import { execFile } from "node:child_process";
import { mkdtempSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import type { TokenKeyInfo } from "../../src/crypto/pkcs11/token.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const BIN = path.join(ROOT, "bin/sigil.mjs");

const run = promisify(execFile);

export const SOFTHSM_LIBRARY = "/usr/lib/softhsm/libsofthsm2.so";

export interface SoftToken {
  conf: string;
  tokenLabel: string;
  keyLabel: string;
  pin: string;
  pinFile: string;
  key: TokenKeyInfo;
  /** What a server needs to use the token (the PIN from its file). */
  env: NodeJS.ProcessEnv;
  unplug(): void;
  plug(): void;
  cleanup(): void;
}

/**
 * One token per test process: the PKCS#11 library reads SOFTHSM2_CONF once, when this process
 * first initialises it (for the key's creation), and keeps that state.
 */
export async function newSoftToken(keyLabel = "sigil-kek"): Promise<SoftToken> {
  const dir = mkdtempSync(path.join(tmpdir(), "sigil-softhsm-"));
  const tokens = path.join(dir, "tokens");
  mkdirSync(tokens, { mode: 0o700 });
  const conf = path.join(dir, "softhsm2.conf");
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const tokenLabel = `sigil-test-${randomBytes(4).toString("hex")}`;
  const pin = randomBytes(8).toString("hex");
  const pinFile = path.join(dir, "pin");
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
  const env = { ...process.env, SOFTHSM2_CONF: conf };
  await run("softhsm2-util", ["--init-token", "--free", "--label", tokenLabel, "--pin", pin, "--so-pin", randomBytes(8).toString("hex")], {
    env,
  });
  // This process's own calls (the in-process tests) use the same token.
  process.env.SOFTHSM2_CONF = conf;
  const sigilEnv = {
    SOFTHSM2_CONF: conf,
    SIGIL_MASTER_KEY_SOURCE: "pkcs11",
    SIGIL_PKCS11_LIBRARY: SOFTHSM_LIBRARY,
    SIGIL_PKCS11_TOKEN_LABEL: tokenLabel,
    SIGIL_PKCS11_KEY_LABEL: keyLabel,
    SIGIL_PKCS11_PIN_FILE: pinFile,
  };
  // The key, made by the CLI an operator would run.
  const cliEnv: NodeJS.ProcessEnv = { ...process.env, ...sigilEnv };
  delete cliEnv.SIGIL_MASTER_KEY;
  const { stdout } = await run(process.execPath, [BIN, "master-key", "create-pkcs11"], { env: cliEnv, cwd: ROOT });
  const key = JSON.parse(stdout) as TokenKeyInfo;
  const away = `${tokens}.away`;
  return {
    conf,
    tokenLabel,
    keyLabel,
    pin,
    pinFile,
    key,
    env: sigilEnv,
    unplug: () => renameSync(tokens, away),
    plug: () => renameSync(away, tokens),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
