// A migrated store on a fresh SQLite file or PostgreSQL database, with one organization,
// for tests of the storage layer itself (no server).
import { describe, before, after } from "node:test";
import { engines, newInstance, type EngineSpec } from "./server.ts";
import { migrate, openStore, type Store, type StoreTimeouts } from "../../src/store/db.ts";
import type { ActivityStatus, Executor } from "../../src/store/schema.ts";
import { newId } from "../../src/store/util.ts";

export interface ScratchStore {
  store: Store;
  orgId: string;
  dataDir: string;
  /** The database's URL (PostgreSQL): another pool on it is another node. */
  databaseUrl?: string;
  cleanup(): Promise<void>;
}

export async function scratchStore(engine: EngineSpec["name"] = "sqlite", timeouts?: Partial<StoreTimeouts>): Promise<ScratchStore> {
  const inst = await newInstance(engine);
  const store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined, timeouts });
  await migrate(store.db);
  const orgId = newId();
  await store.db
    .insertInto("organizations")
    .values({
      id: orgId,
      name: "o",
      parent_id: null,
      root_quorum_threshold: 1,
      policy_version: 0,
      settings: "{}",
      created_at: 1,
      updated_at: 1,
    })
    .execute();
  return {
    store,
    orgId,
    dataDir: inst.dataDir,
    ...(inst.env.DATABASE_URL ? { databaseUrl: inst.env.DATABASE_URL } : {}),
    async cleanup() {
      await store.close();
      await inst.cleanup();
    },
  };
}

/**
 * One suite per engine (engines.ts: those with a server when TEST_DATABASE_URL names one), each with its own scratch
 * store, made before the suite's tests and removed after them; `store()` is the suite's.
 */
export function describeOnScratchStores(title: string, body: (store: () => ScratchStore) => void): void {
  for (const spec of engines()) {
    describe(`${title} [${spec.name}]`, { skip: spec.skip }, () => {
      let s: ScratchStore;
      before(async () => (s = await scratchStore(spec.name)));
      after(async () => s?.cleanup());
      body(() => s);
    });
  }
}

/** An activity row as the pipeline leaves a settled one (for migration tests); returns its id. */
export async function insertActivityRow(
  db: Executor,
  a: { organizationId: string; type: string; submittedBy: string; result: unknown; at: number; status?: ActivityStatus },
): Promise<string> {
  const id = newId();
  await db
    .insertInto("activities")
    .values({
      id,
      organization_id: a.organizationId,
      type: a.type,
      status: a.status ?? "ACTIVITY_STATUS_COMPLETED",
      fingerprint: newId(),
      intent: "{}",
      result: JSON.stringify(a.result),
      failure: null,
      submitted_by: a.submittedBy,
      app_proofs: null,
      created_at: a.at,
      updated_at: a.at,
    })
    .execute();
  return id;
}
