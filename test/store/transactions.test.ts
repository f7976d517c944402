// Grouped commits on SQLite: each activity still all-or-nothing, and alone in failing.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import type { Store } from "../../src/store/db.ts";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";
import { newId } from "../../src/store/util.ts";

describe("SQLite group commit", () => {
  let scratch: ScratchStore;
  let store: Store;
  let orgId: string;

  before(async () => {
    scratch = await scratchStore();
    ({ store, orgId } = scratch);
  });
  after(async () => scratch?.cleanup());

  const tag = (name: string) => ({ id: newId(), organization_id: orgId, name, created_at: 1, updated_at: 1 });

  it("rolls back only the activity that failed, and answers each caller with its own outcome", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        store.transact(async (tx) => {
          await tx
            .insertInto("user_tags")
            .values(tag(`t${i}`))
            .execute();
          if (i % 3 === 0) throw new Error(`job ${i} fails after writing`);
          return i;
        }),
      ),
    );
    results.forEach((r, i) => {
      if (i % 3 === 0) assert.equal(r.status, "rejected", `job ${i}`);
      else assert.deepEqual(r, { status: "fulfilled", value: i });
    });
    const names = (await store.db.selectFrom("user_tags").select("name").execute()).map((r) => r.name).sort();
    const expected = Array.from({ length: 30 }, (_, i) => i)
      .filter((i) => i % 3 !== 0)
      .map((i) => `t${i}`)
      .sort();
    assert.deepEqual(names, expected);
  });

  it("a constraint violation in one activity leaves the others of its group intact", async () => {
    const results = await Promise.allSettled([
      store.transact((tx) => tx.insertInto("user_tags").values(tag("dup")).execute()),
      store.transact((tx) => tx.insertInto("user_tags").values(tag("dup")).execute()),
      store.transact((tx) => tx.insertInto("user_tags").values(tag("other")).execute()),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ["fulfilled", "rejected", "fulfilled"],
    );
    const rows = await store.db.selectFrom("user_tags").select("name").where("name", "in", ["dup", "other"]).execute();
    assert.equal(rows.length, 2);
  });

  it("runs the activities of a group in submission order, each seeing the ones before it", async () => {
    const seen = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        store.transact(async (tx) => {
          const before = await tx.selectFrom("user_tags").select("name").where("name", "like", "seq%").execute();
          await tx
            .insertInto("user_tags")
            .values(tag(`seq${i}`))
            .execute();
          return before.length;
        }),
      ),
    );
    assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  });
});
