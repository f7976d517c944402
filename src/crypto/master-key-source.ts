// Where the master key comes from: SIGIL_MASTER_KEY when set; otherwise a key generated
// once and kept in the data directory (mode 0600), with a warning, so the embedded default
// works out of the box. Production deployments — and any with several nodes — set it.
import fs from "node:fs";
import path from "node:path";
import { MasterKey } from "./envelope.ts";
import { ensurePrivateDir, restrictFiles } from "../store/data-dir.ts";

export interface MasterKeyResult {
  key: MasterKey;
  warning?: string;
}

export function resolveMasterKey(configured: string | undefined, dataDir: string): MasterKeyResult {
  if (configured) return { key: MasterKey.parse(configured) };
  const file = path.join(dataDir, "master.key");
  // Only the service's own user may read the key (docs/tvc-isolation.md §4): 0700 / 0600, also when they exist.
  ensurePrivateDir(dataDir);
  if (fs.existsSync(file)) {
    restrictFiles(file);
    return {
      key: MasterKey.parse(fs.readFileSync(file, "utf8")),
      warning: `SIGIL_MASTER_KEY is not set; using the key kept in ${file}. Set SIGIL_MASTER_KEY in production.`,
    };
  }
  const key = MasterKey.generate();
  try {
    // "wx": never overwrite a key another process (e.g. `sigil init`) wrote meanwhile.
    fs.writeFileSync(file, key.toHex() + "\n", { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return resolveMasterKey(undefined, dataDir);
    throw err;
  }
  return {
    key,
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
