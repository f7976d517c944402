// A migrated store on a fresh SQLite file or PostgreSQL database, with one organization,
// for tests of the storage layer itself (no server).
import { newInstance, type EngineSpec } from "./server.ts";
import { migrate, openStore, type Store, type StoreTimeouts } from "../../src/store/db.ts";
import { newId } from "../../src/store/util.ts";

export interface ScratchStore {
  store: Store;
  orgId: string;
  dataDir: string;
  cleanup(): Promise<void>;
}

export async function scratchStore(engine: EngineSpec["name"] = "sqlite", timeouts?: Partial<StoreTimeouts>): Promise<ScratchStore> {
  const inst = await newInstance(engine);
  const store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined, timeouts });
  await migrate(store.db);
  const orgId = newId();
  await store.db
    .insertInto("organizations")
    .values({ id: orgId, name: "o", parent_id: null, root_quorum_threshold: 1, policy_version: 0, settings: "{}", created_at: 1, updated_at: 1 })
    .execute();
  return {
    store,
    orgId,
    dataDir: inst.dataDir,
    async cleanup() {
      await store.close();
      await inst.cleanup();
    },
  };
}
