// The storage engines the tests run on: every engine of `ENGINES` (src/store/engines.ts), so a
// new engine is tested by every test that runs per engine once it is in that list and has a
// way to make test databases here (docs/testing.md §5, docs/storage.md §2).
//
// An engine that serves no DATABASE_URL at all (SQLite: a file in the data directory) always
// runs. Any other runs when TEST_DATABASE_URL names a server of it: one URL, or several
// separated by commas, each given to the engine whose `matches` accepts it — the same choice
// `openStore` makes. `TEST_DATABASE_URL=postgres://…` is the PostgreSQL server CI runs.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { ENGINES, engineFor, type Engine } from "../../src/store/engines.ts";
import { pgTemplate } from "./pg-template.ts";

export type { Engine } from "../../src/store/engines.ts";

export interface EngineSpec {
  name: Engine;
  /** Why the engine is skipped, when it is. */
  skip?: string;
}

/** The server URL TEST_DATABASE_URL gives for `engine`, if any. */
export function testDatabaseUrl(engine: Engine): string | undefined {
  const urls = (process.env.TEST_DATABASE_URL ?? "")
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");
  return urls.find((u) => engineFor(u).name === engine);
}

/** Every engine, in ENGINES order, with the reason it is skipped in this run. */
export function engines(): EngineSpec[] {
  return ENGINES.map((e): EngineSpec => {
    if (e.matches(undefined) || testDatabaseUrl(e.name)) return { name: e.name };
    return {
      name: e.name,
      skip: `TEST_DATABASE_URL names no ${e.name} server (${e.schemes.map((s) => `${s}//…`).join(", ")}): ${e.name} tests skipped`,
    };
  });
}

/** A database of a test's own: what DATABASE_URL is for it (undefined: none), and how to remove it. */
export interface TestDatabase {
  url: string | undefined;
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** An empty database rather than a migrated copy (docs/testing.md §5). */
  emptyDatabase?: boolean;
}

/**
 * How each engine makes a database of a test's own. Keyed by every engine name: an engine
 * added to ENGINES without an entry here does not compile (docs/storage.md §2).
 */
const TEST_DATABASES: { [E in Engine]: (server: string | undefined, opts: TestDatabaseOptions) => Promise<TestDatabase> } = {
  // The file sigil.db in the instance's own data directory, removed with it.
  sqlite: async () => ({ url: undefined, drop: async () => {} }),
  // A database per instance, copied from the run's migrated template (pg-template.ts) unless empty.
  postgres: async (server, opts) => {
    if (!server) throw new Error("TEST_DATABASE_URL names no postgres server");
    const name = `sigil_test_${randomBytes(6).toString("hex")}`;
    const template = opts.emptyDatabase ? undefined : await pgTemplate(server);
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(server);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      async drop() {
        const c = new pg.Client({ connectionString: server });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  },
};

/** A fresh database on `engine` for one test instance. */
export function newTestDatabase(engine: Engine, opts: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const spec = engines().find((e) => e.name === engine);
  if (!spec) throw new Error(`no storage engine ${engine}`);
  if (spec.skip) throw new Error(spec.skip);
  return TEST_DATABASES[engine](testDatabaseUrl(engine), opts);
}
