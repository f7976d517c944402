// Everything a server instance has written, as text to search for secrets that must not be
// there: its log, and its database — the SQLite files byte for byte (latin1, so any byte
// sequence survives), or every row of every PostgreSQL table as text.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import type { EngineSpec, Instance, RunningServer } from "./server.ts";

export interface Haystack {
  where: string;
  text: string;
}

export async function storedText(engine: EngineSpec["name"], inst: Instance, server: RunningServer): Promise<Haystack[]> {
  const haystacks: Haystack[] = [{ where: "server log", text: server.output() }];
  if (engine === "sqlite") {
    for (const f of readdirSync(inst.dataDir)) {
      try {
        haystacks.push({ where: f, text: readFileSync(path.join(inst.dataDir, f)).toString("latin1") });
      } catch {
        /* a directory */
      }
    }
    assert.ok(haystacks.length > 1, "the SQLite files were read");
    return haystacks;
  }
  const client = new pg.Client({ connectionString: inst.env.DATABASE_URL });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'");
    assert.ok(tables.rows.some((t) => t.table_name === "wallets"));
    for (const { table_name } of tables.rows) {
      const rows = await client.query<{ t: string }>(`SELECT t::text AS t FROM "${table_name}" t`);
      haystacks.push({ where: table_name, text: rows.rows.map((r) => r.t).join("\n") });
    }
  } finally {
    await client.end();
  }
  return haystacks;
}
