// Under steady writes the WAL must stay bounded: checkpoints run on a worker thread, and
// PASSIVE ones alone would let it grow without end (seen: 800 MB in a 10 s load run).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { migrate, openStore, type Store } from "../../src/store/db.ts";
import { newId } from "../../src/store/util.ts";

describe("SQLite WAL under steady writes", { timeout: 120_000 }, () => {
  let dir: string;
  let store: Store;
  const org = newId();
  const errors: string[] = [];

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "sigil-wal-"));
    store = openStore({ dataDir: dir });
    await migrate(store.db);
    store.checkpointInBackground((m) => errors.push(m));
    await store.db
      .insertInto("organizations")
      .values({ id: org, name: "o", parent_id: null, root_quorum_threshold: 1, settings: "{}", created_at: 1, updated_at: 1 })
      .execute();
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stays far below what the writes would take without checkpoints", async () => {
    const walFile = path.join(dir, "sigil.db-wal");
    let maxWal = 0;
    const commits = 12_000;
    for (let i = 0; i < commits; i++) {
      // One commit per call: every commit appends the pages it touched to the WAL.
      await store.transact((tx) =>
        tx
          .insertInto("user_tags")
          .values({ id: newId(), organization_id: org, name: `tag-${i}-${newId()}`, created_at: i, updated_at: i })
          .execute(),
      );
      if (i % 500 === 0) maxWal = Math.max(maxWal, statSync(walFile).size);
    }
    maxWal = Math.max(maxWal, statSync(walFile).size);
    // 12,000 commits of 3+ pages of 4 KiB each would be ≥ 140 MiB of WAL if never reset.
    assert.ok(maxWal < 48 * 1024 * 1024, `WAL reached ${(maxWal / 1048576).toFixed(1)} MiB`);
    assert.deepEqual(errors, []);
    const count = await store.db.selectFrom("user_tags").select((e) => e.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), commits);
  });
});
