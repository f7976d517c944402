// The list of storage engines (docs/storage.md §1): DATABASE_URL picks the engine by its
// scheme, an unknown scheme stops startup naming the accepted ones, a database handle no
// engine opened has no dialect, and a pool's statement names are its own (docs/storage.md §3).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DummyDriver, Kysely, MysqlAdapter, MysqlIntrospector, MysqlQueryCompiler, type Dialect } from "kysely";
import { dialectOf, engineFor, ENGINES } from "../../src/store/engines.ts";
import { openStore } from "../../src/store/db.ts";
import { StatementNames } from "../../src/store/postgres/pool.ts";

/** A Kysely handle on an engine Sigil does not have (MySQL's adapter, no connection). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a handle on no schema at all
function foreignHandle(): Kysely<any> {
  const mysql: Dialect = {
    createAdapter: () => new MysqlAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new MysqlIntrospector(db),
    createQueryCompiler: () => new MysqlQueryCompiler(),
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
  return new Kysely<any>({ dialect: mysql });
}

describe("storage engines", () => {
  it("no DATABASE_URL is SQLite; postgres:// and postgresql:// are PostgreSQL", () => {
    assert.equal(engineFor(undefined).name, "sqlite");
    assert.equal(engineFor("").name, "sqlite");
    assert.equal(engineFor("postgres://u@db.example:5432/sigil").name, "postgres");
    assert.equal(engineFor("postgresql://u@db.example/sigil").name, "postgres");
    assert.equal(engineFor("PostgreSQL://u@db.example/sigil").name, "postgres");
  });

  it("an unknown scheme is refused, naming the schemes that are accepted", () => {
    for (const url of ["mysql://u@db.example/sigil", "sqlite:///var/lib/sigil.db", "redis://127.0.0.1:6379"]) {
      assert.throws(
        () => engineFor(url),
        (e: Error) =>
          /unknown scheme/.test(e.message) &&
          e.message.includes("postgres://") &&
          e.message.includes("postgresql://") &&
          e.message.includes("no DATABASE_URL"),
        url,
      );
    }
    assert.throws(() => engineFor("db.example:5432"), /unknown scheme "db.example:"/);
    assert.throws(() => engineFor("/var/lib/sigil.db"), /not a URL; expected postgres:\/\//);
  });

  it("openStore refuses an unknown scheme before creating anything", () => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), "sigil-engines-")), "data");
    try {
      assert.throws(() => openStore({ databaseUrl: "mysql://u@db.example/sigil", dataDir: dir }), /unknown scheme "mysql:"/);
      assert.throws(() => rmSync(dir), /ENOENT/, "no data directory was made");
    } finally {
      rmSync(path.dirname(dir), { recursive: true, force: true });
    }
  });

  it("every engine names itself, its dialect, and the URLs it serves", () => {
    assert.deepEqual(
      ENGINES.map((e) => e.name),
      ["sqlite", "postgres"],
    );
    for (const e of ENGINES) assert.equal(e.dialect.engine, e.name);
    // Exactly one engine serves each URL (no overlap in the list).
    for (const url of [undefined, "postgres://h/d", "postgresql://h/d"])
      assert.equal(ENGINES.filter((e) => e.matches(url)).length, 1, String(url));
  });

  it("dialectOf names the engine of a handle it opened, and throws for any other adapter", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "sigil-engines-"));
    const store = openStore({ dataDir: dir });
    try {
      assert.equal(store.engine, "sqlite");
      assert.equal(dialectOf(store.db).engine, "sqlite");
      await store.db.transaction().execute(async (tx) => assert.equal(dialectOf(tx).engine, "sqlite"));
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
    const foreign = foreignHandle();
    assert.throws(() => dialectOf(foreign), /no storage engine in src\/store\/engines\.ts owns the Kysely adapter MysqlAdapter/);
    await foreign.destroy();
  });

  it("statement names belong to one pool: another pool's cache is untouched, and a stale plan renames only this one", () => {
    const a = new StatementNames();
    const b = new StatementNames();
    const text = "select * from users where id = $1";
    const first = a.nameOf(text);
    assert.match(first ?? "", /^sigil_0_/);
    assert.equal(a.nameOf(text), first, "the same text keeps its name");
    assert.equal(b.size, 0, "the other pool prepared nothing");
    assert.equal(b.nameOf(text), first, "names derive from the text: the same on every pool");
    a.renew();
    assert.match(a.nameOf(text) ?? "", /^sigil_1_/);
    assert.equal(b.nameOf(text), first, "the other pool keeps its prepared name");
    a.clear();
    assert.equal(a.size, 0);
  });
});
