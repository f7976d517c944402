// Where the master key (the key-encryption key) comes from, as one list (docs/custody.md §1):
//   env    — SIGIL_MASTER_KEY, 32 bytes in the environment;
//   file   — <data dir>/master.key, generated once (mode 0600) with a warning, so the embedded
//            default works out of the box;
//   pkcs11 — a non-extractable AES-256 key on a PKCS#11 token; the key never enters this process.
// SIGIL_MASTER_KEY_SOURCE picks one; unset, it is `env` when SIGIL_MASTER_KEY is set, else `file`
// (what Sigil always did). Adding a source (a cloud KMS) is one entry here and one Kek.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LocalKey, MasterKey, type Kek } from "./envelope.ts";
import { ensurePrivateDir, restrictFiles } from "../store/data-dir.ts";
import type { MasterKeySourceName } from "./master-key-source-names.ts";
import type { Pkcs11Settings } from "./pkcs11/token.ts";

export interface MasterKeyResult {
  key: MasterKey;
  warning?: string;
}

/** What the sources read from the configuration (src/config.ts KNOBS). */
export interface MasterKeyConfig {
  dataDir: string;
  masterKey?: string | undefined;
  masterKeySource?: MasterKeySourceName | undefined;
  pkcs11Library?: string | undefined;
  pkcs11TokenLabel?: string | undefined;
  pkcs11KeyLabel?: string | undefined;
  pkcs11Pin?: string | undefined;
  pkcs11PinFile?: string | undefined;
  pkcs11TimeoutMs?: number | undefined;
  pkcs11Mechanism?: "auto" | "aes-gcm" | "aes-kw" | undefined;
  masterKeyPrevious?: string | undefined;
  pkcs11PreviousKeyLabel?: string | undefined;
}

export interface MasterKeySource {
  name: MasterKeySourceName;
  open(config: MasterKeyConfig): Promise<MasterKeyResult>;
  /** The key without creating anything and without a token (the auth proxy alone); undefined when this source has none to give. */
  read(config: MasterKeyConfig): MasterKey | undefined;
}

const env: MasterKeySource = {
  name: "env",
  async open(config) {
    if (!config.masterKey) throw new Error("SIGIL_MASTER_KEY_SOURCE=env: SIGIL_MASTER_KEY is not set");
    return { key: MasterKey.parse(config.masterKey) };
  },
  read: (config) => (config.masterKey ? MasterKey.parse(config.masterKey) : undefined),
};

const file: MasterKeySource = {
  name: "file",
  async open(config) {
    if (config.masterKey) throw new Error("SIGIL_MASTER_KEY_SOURCE=file: SIGIL_MASTER_KEY is set too; unset it or use the env source");
    return resolveMasterKey(undefined, config.dataDir);
  },
  read: (config) => readMasterKey(undefined, config.dataDir),
};

const pkcs11: MasterKeySource = {
  name: "pkcs11",
  async open(config) {
    const settings = pkcs11Settings(config);
    // Loaded only when chosen: the other sources never touch a token library.
    const { Pkcs11Kek } = await import("./pkcs11/token.ts");
    return { key: new MasterKey(await Pkcs11Kek.open(settings)) };
  },
  read: () => undefined,
};

export const MASTER_KEY_SOURCES: readonly MasterKeySource[] = [env, file, pkcs11];

/** The source the configuration names, or today's choice when it names none. */
export function masterKeySourceOf(config: MasterKeyConfig): MasterKeySource {
  const name = config.masterKeySource ?? (config.masterKey ? "env" : "file");
  const source = MASTER_KEY_SOURCES.find((s) => s.name === name);
  if (!source)
    throw new Error(
      `SIGIL_MASTER_KEY_SOURCE: unknown source ${JSON.stringify(name)}; expected ${MASTER_KEY_SOURCES.map((s) => s.name).join(", ")}`,
    );
  return source;
}

/**
 * Opens the master key from its source (a token: connects and checks its key), with the
 * previous keys of a rotation after it: they open, the source's key seals (docs/custody.md §4).
 */
export async function openMasterKey(config: MasterKeyConfig): Promise<MasterKeyResult> {
  const opened = await masterKeySourceOf(config).open(config);
  const previous: Kek[] = [];
  try {
    if (config.masterKeyPrevious) previous.push(LocalKey.parse(config.masterKeyPrevious));
    if (config.pkcs11PreviousKeyLabel) {
      const { Pkcs11Kek } = await import("./pkcs11/token.ts");
      previous.push(
        await Pkcs11Kek.open({ ...pkcs11Settings({ ...config, masterKey: undefined }), keyLabel: config.pkcs11PreviousKeyLabel }),
      );
    }
  } catch (err) {
    await opened.key.close();
    for (const k of previous) await k.close?.();
    throw err;
  }
  if (previous.length === 0) return opened;
  if (previous.some((k) => k.id === opened.key.id))
    throw new Error("the previous master key is the current one; unset SIGIL_MASTER_KEY_PREVIOUS / SIGIL_PKCS11_PREVIOUS_KEY_LABEL");
  return { ...opened, key: new MasterKey([opened.key.kek, ...previous]) };
}

/** The PKCS#11 settings, checked: every one is needed, the PIN from the environment or a file. */
export function pkcs11Settings(config: MasterKeyConfig): Pkcs11Settings {
  if (config.masterKey) {
    throw new Error(
      "SIGIL_MASTER_KEY_SOURCE=pkcs11: SIGIL_MASTER_KEY is set; unset it (the key-encryption key is on the token, not in the environment)",
    );
  }
  const missing = [
    ["SIGIL_PKCS11_LIBRARY", config.pkcs11Library],
    ["SIGIL_PKCS11_TOKEN_LABEL", config.pkcs11TokenLabel],
  ].filter(([, v]) => !v);
  if (missing.length) throw new Error(`SIGIL_MASTER_KEY_SOURCE=pkcs11 needs ${missing.map(([n]) => n).join(" and ")}`);
  if (config.pkcs11Pin !== undefined && config.pkcs11PinFile !== undefined)
    throw new Error("set SIGIL_PKCS11_PIN or SIGIL_PKCS11_PIN_FILE, not both");
  let pin = config.pkcs11Pin;
  if (pin === undefined && config.pkcs11PinFile !== undefined) {
    try {
      pin = fs.readFileSync(config.pkcs11PinFile, "utf8").split(/\r?\n/)[0];
    } catch (err) {
      throw new Error(`SIGIL_PKCS11_PIN_FILE: cannot read ${config.pkcs11PinFile} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
    }
  }
  if (!pin) throw new Error("SIGIL_MASTER_KEY_SOURCE=pkcs11 needs the token's user PIN: SIGIL_PKCS11_PIN or SIGIL_PKCS11_PIN_FILE");
  return {
    library: config.pkcs11Library!,
    tokenLabel: config.pkcs11TokenLabel!,
    keyLabel: config.pkcs11KeyLabel ?? "sigil-kek",
    pin,
    timeoutMs: config.pkcs11TimeoutMs ?? 2_000,
    mechanism: config.pkcs11Mechanism ?? "auto",
  };
}

/** The `env` / `file` key: SIGIL_MASTER_KEY when given, else <data dir>/master.key (made when absent). */
export function resolveMasterKey(configured: string | undefined, dataDir: string): MasterKeyResult {
  if (configured) return { key: MasterKey.parse(configured) };
  const file = path.join(dataDir, "master.key");
  // Only the service's own user may read the key (docs/tvc-isolation.md §4): 0700 / 0600, also when they exist.
  ensurePrivateDir(dataDir);
  if (fs.existsSync(file)) {
    restrictFiles(file);
    return {
      key: MasterKey.parse(fs.readFileSync(file, "utf8")),
      warning: `SIGIL_MASTER_KEY is not set; using the key kept in ${file}. Set SIGIL_MASTER_KEY (or use a PKCS#11 token) in production.`,
    };
  }
  const local = new LocalKey(randomBytes(32));
  try {
    // "wx": never overwrite a key another process (e.g. `sigil init`) wrote meanwhile.
    fs.writeFileSync(file, local.toHex() + "\n", { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return resolveMasterKey(undefined, dataDir);
    throw err;
  }
  return {
    key: new MasterKey(local),
    warning: `SIGIL_MASTER_KEY is not set; generated a new master key in ${file}. Back it up, or set SIGIL_MASTER_KEY.`,
  };
}

/**
 * The master key as resolveMasterKey would find it, without ever creating one (the auth proxy
 * reads it to derive its secret; docs/auth-proxy-service.md §6): undefined when neither
 * SIGIL_MASTER_KEY nor <data dir>/master.key holds it.
 */
export function readMasterKey(configured: string | undefined, dataDir: string): MasterKey | undefined {
  if (configured) return MasterKey.parse(configured);
  const file = path.join(dataDir, "master.key");
  if (!fs.existsSync(file)) return undefined;
  return MasterKey.parse(fs.readFileSync(file, "utf8"));
}
