// A migrated PostgreSQL database that test databases are copied from (docs/testing.md §5):
// CREATE DATABASE … TEMPLATE copies it in a fraction of what running every migration on an
// empty database costs (about a second each time, for each of the hundred-odd databases a
// run creates).
//
// `npm test` (scripts/run-tests.mjs) names one template per run in SIGIL_TEST_PG_TEMPLATE and
// drops it at the end, so every run migrates an empty database once, with the sources as they
// are. A test file run on its own names it after a hash of the migrations, and keeps it for the
// next time. Tests of what happens on an empty database (`sigil init`, concurrent first starts)
// ask newInstance for one.
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";

const STORE = path.resolve(import.meta.dirname, "../../src/store");

/** The template's name: per run under npm test, else after what the migrations are. */
function templateName(): string {
  const named = process.env.SIGIL_TEST_PG_TEMPLATE;
  if (named) return named;
  const h = createHash("sha256");
  const dir = path.join(STORE, "migrations");
  for (const f of readdirSync(dir).sort()) h.update(f).update(readFileSync(path.join(dir, f)));
  for (const f of ["db.ts", "dialect.ts", "schema.ts"]) h.update(f).update(readFileSync(path.join(STORE, f)));
  return `sigil_tpl_${h.digest("hex").slice(0, 16)}`;
}

const exists = async (admin: pg.Client, name: string) =>
  (await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1;

/** Migrates a new database and gives it the template's name; whoever renames first wins. */
async function build(base: string, name: string): Promise<void> {
  const { migrate, openStore } = await import("../../src/store/db.ts");
  const scratch = `sigil_tplbuild_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${scratch}`);
    const url = new URL(base);
    url.pathname = `/${scratch}`;
    const store = openStore({ dataDir: "", databaseUrl: url.toString() });
    try {
      await migrate(store.db);
    } finally {
      await store.close();
    }
    try {
      await admin.query(`ALTER DATABASE ${scratch} RENAME TO ${name}`);
    } catch (err) {
      // 42P04 duplicate_database: another process built it first.
      if ((err as { code?: string }).code !== "42P04") throw err;
      await admin.query(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}

let ready: Promise<string> | undefined;

/** The name of the migrated template (built on first use). */
export function pgTemplate(base: string): Promise<string> {
  ready ??= (async () => {
    const name = templateName();
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    const found = await exists(admin, name).finally(() => admin.end());
    if (!found) await build(base, name);
    return name;
  })();
  ready.catch(() => (ready = undefined));
  return ready;
}
