// The store's credential epoch and the remembered look-ups that rely on it (docs/storage.md
// §3.1), on each engine: a write to a credential-bearing row moves the epoch for every request
// that arrives after its commit — made here, by another connection to the SQLite file, or by
// another node on PostgreSQL — and other writes do not; on PostgreSQL, a listening connection
// that is dropped stops every remembered look-up until a new one listens.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import SQLite from "better-sqlite3";
import path from "node:path";
import { sql } from "kysely";
import { engines } from "../helpers/server.ts";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";
import { openStore, type Store } from "../../src/store/db.ts";
import { newId } from "../../src/store/util.ts";
import { CredentialCache } from "../../src/auth/credential-cache.ts";
import { WATCH_APPLICATION_NAME } from "../../src/store/postgres/credential-watch.ts";

const PUBLIC_KEY = "02" + "cd".repeat(32);

for (const spec of engines()) {
  describe(`credential epoch and remembered look-ups [${spec.name}]`, { skip: spec.skip, timeout: 60_000 }, () => {
    let s: ScratchStore;
    /** SQLite: writes from another connection; PostgreSQL: from another node's pool. */
    let other: (statement: string) => Promise<void>;
    let otherStore: Store | undefined;
    let closeOther: (() => void) | undefined;
    let keyId: string;
    let userId: string;

    before(async () => {
      s = await scratchStore(spec.name);
      userId = newId();
      keyId = newId();
      await s.store.db
        .insertInto("users")
        .values({
          id: userId,
          organization_id: s.orgId,
          name: "u",
          email: null,
          email_normalized: null,
          phone: null,
          created_at: 1,
          updated_at: 1,
        })
        .execute();
      await s.store.db
        .insertInto("api_keys")
        .values({
          id: keyId,
          organization_id: s.orgId,
          user_id: userId,
          name: "k",
          public_key: PUBLIC_KEY,
          public_key_normalized: PUBLIC_KEY,
          curve: "API_KEY_CURVE_P256",
          credential_type: "CREDENTIAL_TYPE_API_KEY_P256",
          expiration_seconds: null,
          expires_at: null,
          created_at: 1,
          updated_at: 1,
        })
        .execute();
      if (s.store.engine === "sqlite") {
        // Another connection to the file: what another process (a `sigil` command, an
        // operator's shell) is to the server's; test/e2e/credential-cache-process.test.ts
        // runs a real one beside a server.
        const conn = new SQLite(path.join(s.dataDir, "sigil.db"));
        closeOther = () => conn.close();
        other = async (statement) => void conn.exec(statement);
      } else {
        otherStore = openStore({ dataDir: s.dataDir, databaseUrl: s.databaseUrl });
        other = async (statement) => void (await sql.raw(statement).execute(otherStore!.db));
      }
    });
    after(async () => {
      closeOther?.();
      await otherStore?.close();
      await s?.cleanup();
    });

    const epochNow = async (): Promise<number | undefined> => s.store.credentialWatch().epoch(performance.now());
    /** The first epoch: PostgreSQL's watch listens from its first use on. */
    const settledEpoch = async (): Promise<number> => {
      for (let i = 0; i < 200; i++) {
        const e = await epochNow();
        if (e !== undefined) return e;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("the credential watch never vouched for an epoch");
    };

    it("this process's writes: a credential row moves the epoch, a wallet-keys version or a policy version does not", async () => {
      const e0 = await settledEpoch();
      assert.equal(await epochNow(), e0, "nothing written: the same epoch");
      await s.store.db
        .updateTable("organizations")
        .set({ keys_version: sql`keys_version + 1`, policy_version: sql`policy_version + 1` })
        .where("id", "=", s.orgId)
        .execute();
      assert.equal(await epochNow(), e0, "columns the look-up does not read");
      await s.store.db.updateTable("api_keys").set({ expires_at: 9e15 }).where("id", "=", keyId).execute();
      const e1 = await epochNow();
      assert.ok(e1 !== undefined && e1 > e0, `an API key written here moves the epoch (${e0} → ${e1})`);
      await s.store.db.updateTable("users").set({ name: "renamed" }).where("id", "=", userId).execute();
      const e2 = await epochNow();
      assert.ok(e2 !== undefined && e2 > e1, "a user renamed here moves it");
    });

    it(`${spec.name === "sqlite" ? "another connection" : "another node"} revokes a key: the very next look-up here reads the store and finds nothing`, async () => {
      await settledEpoch();
      const cache = new CredentialCache(s.store.credentialWatch());
      let reads = 0;
      const read = async () => {
        reads++;
        return s.store.db
          .selectFrom("api_keys")
          .select(["id", "organization_id"])
          .where("public_key_normalized", "=", PUBLIC_KEY)
          .execute();
      };
      assert.equal((await cache.rows(PUBLIC_KEY, performance.now(), read)).length, 1);
      assert.equal((await cache.rows(PUBLIC_KEY, performance.now(), read)).length, 1);
      assert.equal(reads, 1, "the second look-up is remembered");
      await other(`DELETE FROM api_keys WHERE id = '${keyId}'`);
      // No wait: the request arrives once the other side's commit has returned.
      assert.deepEqual(await cache.rows(PUBLIC_KEY, performance.now(), read), [], "the revoked key is not served from memory");
      assert.equal(reads, 2);
      assert.deepEqual(await cache.rows(PUBLIC_KEY, performance.now(), read), []);
      assert.equal(reads, 3, "an unknown key is never remembered");
      assert.equal(cache.size, 0);
    });

    if (spec.name === "postgres") {
      it("the listening connection dropped: nothing is served from memory until a new one listens, under a new epoch", async () => {
        const e0 = await settledEpoch();
        const killed = await sql<{
          ok: boolean;
        }>`select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = ${WATCH_APPLICATION_NAME} and datname = current_database()`.execute(
          otherStore!.db,
        );
        assert.equal(killed.rows.length, 1, "one listening connection for this store");
        // Whether the loss is noticed by the round trip or before it: no epoch, or a new one.
        const right = await epochNow();
        assert.ok(right === undefined || right > e0, `after the drop: ${right} (was ${e0})`);
        const cache = new CredentialCache(s.store.credentialWatch());
        let reads = 0;
        const read = async () => (reads++, [{ id: "x" }]);
        // While it reconnects every look-up reads the store.
        for (let i = 0; i < 5 && (await epochNow()) === undefined; i++) await cache.rows("k", performance.now(), read);
        const e1 = await settledEpoch();
        assert.ok(e1 > e0, `a new connection, a new epoch (${e0} → ${e1})`);
        await cache.rows("k", performance.now(), read);
        const before = reads;
        await cache.rows("k", performance.now(), read);
        assert.equal(reads, before, "remembered again once it listens");
        // And a change made after the reconnection still reaches it.
        await other(`UPDATE users SET name = 'again' WHERE id = '${userId}'`);
        assert.ok((await epochNow())! > e1);
      });
    }
  });
}
