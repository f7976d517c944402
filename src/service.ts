// Opening the service's state, shared by `sigil serve` and `sigil init`: store, migrations,
// and the master key — checked against the database so a wrong key fails at startup, not
// on the first secret it cannot decrypt.
import { loadConfig, type Config } from "./config.ts";
import { migrate, openStore, type Store } from "./store/db.ts";
import { openMasterKey } from "./crypto/master-key-source.ts";
import { ensurePrivateDir } from "./store/data-dir.ts";
import type { MasterKey } from "./crypto/envelope.ts";
import { randomBytes } from "node:crypto";
import { newServiceState, type ServiceState } from "./service-state.ts";
import { AAD } from "./crypto/aad.ts";

export interface Service {
  config: Config;
  store: Store;
  masterKey: MasterKey;
  /** The store's caches: created here, once per store, and handed to the app and the dispatcher. */
  state: ServiceState;
  warnings: string[];
}

const CANARY_AAD = AAD.masterKeyCanary;

export async function openService(argv: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<Service> {
  const config = loadConfig(env, argv);
  // Also with PostgreSQL and SIGIL_MASTER_KEY: TVC pid records live here (docs/tvc-isolation.md §4).
  ensurePrivateDir(config.dataDir);
  const warnings: string[] = [];
  const { key, warning } = await openMasterKey(config);
  if (warning) warnings.push(warning);
  let store: Store;
  try {
    store = openStore({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.dbPoolSize,
      timeouts: {
        connectTimeoutMs: config.dbConnectTimeoutMs,
        statementTimeoutMs: config.dbStatementTimeoutMs,
        idleInTransactionTimeoutMs: config.dbIdleInTransactionTimeoutMs,
        lockTimeoutMs: config.sqliteLockTimeoutMs,
      },
    });
  } catch (err) {
    await key.close();
    throw err;
  }
  try {
    await migrate(store.db);
    await checkCanary(store, key);
    await openRootSecret(store, key);
  } catch (err) {
    await store.close();
    await key.close();
    throw err;
  }
  return { config, store, masterKey: key, state: newServiceState(store.credentialWatch()), warnings };
}

async function checkCanary(store: Store, key: MasterKey): Promise<void> {
  const read = () => store.db.selectFrom("sigil_meta").select("value").where("key", "=", "master_key_canary").executeTakeFirst();
  let row = await read();
  if (!row) {
    // First start: record the canary. Another process may race us; whichever row won is
    // then checked like any other.
    await store.db
      .insertInto("sigil_meta")
      .values({ key: "master_key_canary", value: await key.seal("sigil", CANARY_AAD) })
      .onConflict((oc) => oc.column("key").doNothing())
      .execute();
    row = await read();
    if (!row) throw new Error("could not record the master key canary");
  }
  try {
    await key.open(row.value, CANARY_AAD);
  } catch (err) {
    throw new Error(
      `the master key does not match the one this database was created with: ${(err as Error).message}. ` +
        "Set SIGIL_MASTER_KEY (or the PKCS#11 settings) to the original key.",
    );
  }
}

const ROOT_AAD = AAD.masterKeyRoot;

/**
 * A key that stays on its token has no bytes to derive the service's HMAC keys from (OTP code
 * digests, the proxy secret): they derive from a random root secret instead, made once, kept
 * sealed under the key in sigil_meta and opened here (docs/custody.md §2).
 */
async function openRootSecret(store: Store, key: MasterKey): Promise<void> {
  const read = () => store.db.selectFrom("sigil_meta").select("value").where("key", "=", "master_key_root").executeTakeFirst();
  let row = await read();
  // One key held in memory and no stored root: the key's own bytes, as always.
  if (!row && key.hasRootSecret) return;
  if (!row) {
    // Moving away from a key held in memory (a rotation, file → pkcs11) keeps its bytes as the root.
    const root = key.inheritedRoot() ?? randomBytes(32);
    const sealed = await key.seal(root, ROOT_AAD);
    root.fill(0);
    await store.db
      .insertInto("sigil_meta")
      .values({ key: "master_key_root", value: sealed })
      .onConflict((oc) => oc.column("key").doNothing())
      .execute();
    row = await read();
    if (!row) throw new Error("could not record the master key's root secret");
  }
  const root = await key.open(row.value, ROOT_AAD);
  key.setRootSecret(root);
  root.fill(0);
}
