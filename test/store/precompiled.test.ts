// Precompiled queries bind each call's values in the right places, keep constants, and run
// on a database handle and its transactions alike — on both engines.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { engines } from "../helpers/server.ts";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";
import type { Store } from "../../src/store/db.ts";
import { precompiled } from "../../src/store/precompiled.ts";
import { newId } from "../../src/store/util.ts";

const tagsNamed = precompiled(["organizationId", "name"], (db, v) =>
  db
    .selectFrom("user_tags")
    .select(["id", "name"])
    .where("name", "=", v.name)
    .where("organization_id", "=", v.organizationId)
    .where("created_at", ">", 0)
    .orderBy("id"),
);

for (const engine of engines()) {
  describe(`precompiled queries (${engine.name})`, { skip: engine.skip }, () => {
    let scratch: ScratchStore;
    let store: Store;
    let org: string;
    before(async () => {
      scratch = await scratchStore(engine.name);
      ({ store, orgId: org } = scratch);
      for (const name of ["a", "b"]) {
        await store.db.insertInto("user_tags").values({ id: newId(), organization_id: org, name, created_at: 5, updated_at: 5 }).execute();
      }
    });
    after(async () => scratch?.cleanup());

    it("binds values by name on every call and keeps constant parameters", async () => {
      assert.deepEqual(
        (await tagsNamed(store.db, { organizationId: org, name: "a" })).map((r) => r.name),
        ["a"],
      );
      assert.deepEqual(
        (await tagsNamed(store.db, { organizationId: org, name: "b" })).map((r) => r.name),
        ["b"],
      );
      assert.deepEqual(await tagsNamed(store.db, { organizationId: newId(), name: "a" }), []);
    });

    it("runs inside a transaction with the same compiled statement", async () => {
      const names = await store.transact(async (tx) => {
        await tx.insertInto("user_tags").values({ id: newId(), organization_id: org, name: "c", created_at: 5, updated_at: 5 }).execute();
        return (await tagsNamed(tx, { organizationId: org, name: "c" })).map((r) => r.name);
      });
      assert.deepEqual(names, ["c"]);
    });
  });
}
