// The secrets grep of the e2e tests (wallets, signing): every place a spawned server keeps
// text — its log, the SQLite files byte for byte, or every PostgreSQL row — must not contain
// any of the needles, while the sealed values ("sgl1.") are found (the grep itself works).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import type { EngineSpec, Instance } from "./server.ts";

export interface Secret {
  what: string;
  needle: string;
}

/** Asserts no needle is in the server's log or its database; `table` must exist on PostgreSQL. */
export async function assertSecretsNowhere(
  engine: EngineSpec["name"],
  inst: Instance,
  log: string,
  secrets: readonly Secret[],
  table: string,
): Promise<void> {
  const haystacks: { where: string; text: string }[] = [{ where: "server log", text: log }];
  if (engine === "sqlite") {
    for (const f of readdirSync(inst.dataDir)) {
      try {
        haystacks.push({ where: f, text: readFileSync(path.join(inst.dataDir, f)).toString("latin1") });
      } catch {
        /* a directory */
      }
    }
    assert.ok(haystacks.length > 1, "the SQLite files were read");
  } else {
    const client = new pg.Client({ connectionString: inst.env.DATABASE_URL });
    await client.connect();
    try {
      const tables = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
      );
      assert.ok(
        tables.rows.some((t) => t.table_name === table),
        `table ${table} exists`,
      );
      for (const { table_name } of tables.rows) {
        const rows = await client.query<{ t: string }>(`SELECT t::text AS t FROM "${table_name}" t`);
        haystacks.push({ where: table_name, text: rows.rows.map((r) => r.t).join("\n") });
      }
    } finally {
      await client.end();
    }
  }
  for (const { where, text } of haystacks) {
    for (const { what, needle } of secrets) assert.ok(!text.includes(needle), `${where} contains the ${what}`);
  }
  assert.ok(
    haystacks.some(({ text }) => text.includes("sgl1.")),
    "sealed secrets are stored",
  );
}
