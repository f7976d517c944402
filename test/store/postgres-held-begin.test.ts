// PostgreSQL: a transaction's BEGIN is held back and sent with its first statement when that
// one has no parameters (store/postgres/pool.ts, docs/storage.md §3). Whatever the first
// statement, the transaction must be one: its writes commit together or not at all, a failure
// rolls all of it back, and the connection is clean for the next checkout.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { sql } from "kysely";
import { engines } from "../helpers/server.ts";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";
import { liveOrganizationLocked } from "../../src/store/organizations.ts";
import { newId } from "../../src/store/util.ts";
import type { Executor } from "../../src/store/schema.ts";

const postgres = engines().find((e) => e.name === "postgres")!;

describe("PostgreSQL: BEGIN held back for the first statement", { skip: postgres.skip }, () => {
  let scratch: ScratchStore;
  before(async () => {
    scratch = await scratchStore("postgres");
  });
  after(async () => scratch?.cleanup());

  const tag = (name: string) => ({ id: newId(), organization_id: scratch.orgId, name, created_at: 1, updated_at: 1 });
  const names = async () => (await scratch.store.db.selectFrom("user_tags").select("name").execute()).map((r) => r.name).sort();
  /** The server's own view: inside a transaction block, now() is the transaction's start, not the statement's. */
  const inBlock = async (tx: Executor) =>
    (await sql<{ same: boolean }>`select now() = statement_timestamp() as same`.execute(tx)).rows[0]!.same === false;

  it("a first statement without parameters (the organization's liveness) runs inside the transaction, which rolls back whole", async () => {
    await assert.rejects(
      scratch.store.db.transaction().execute(async (tx) => {
        assert.deepEqual(await liveOrganizationLocked(tx, scratch.orgId), { keysVersion: 0 });
        await tx.insertInto("user_tags").values(tag("rolled-back")).execute();
        await new Promise((r) => setTimeout(r, 5)); // so that now() and statement_timestamp() differ
        assert.equal(await inBlock(tx), true, "the statements after the held BEGIN are in one transaction block");
        throw new Error("fail after writing");
      }),
      /fail after writing/,
    );
    assert.deepEqual(await names(), []);
  });

  it("a first statement with parameters is preceded by the BEGIN; commits are whole", async () => {
    await scratch.store.db.transaction().execute(async (tx) => {
      await tx.insertInto("user_tags").values(tag("a")).execute();
      await tx.insertInto("user_tags").values(tag("b")).execute();
    });
    await assert.rejects(
      scratch.store.db.transaction().execute(async (tx) => {
        await tx.insertInto("user_tags").values(tag("c")).execute();
        await tx.insertInto("user_tags").values(tag("a")).execute(); // unique name: fails
      }),
    );
    assert.deepEqual(await names(), ["a", "b"]);
  });

  it("a failing first statement leaves no transaction open; an empty transaction sends nothing; the pool stays usable", async () => {
    await assert.rejects(scratch.store.db.transaction().execute(async (tx) => sql`select * from no_such_table`.execute(tx)));
    await scratch.store.db.transaction().execute(async () => undefined);
    // Every connection of the pool answers outside any transaction block afterwards (a block
    // left open would have started before this statement).
    await new Promise((r) => setTimeout(r, 5));
    const blocks = await Promise.all(Array.from({ length: 8 }, () => inBlock(scratch.store.db)));
    assert.deepEqual(blocks, Array(8).fill(false));
    await scratch.store.db.transaction().execute(async (tx) => {
      assert.deepEqual(await liveOrganizationLocked(tx, scratch.orgId), { keysVersion: 0 });
      await tx.insertInto("user_tags").values(tag("after")).execute();
    });
    assert.deepEqual(await names(), ["a", "after", "b"]);
  });
});
