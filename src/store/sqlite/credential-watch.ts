// SQLite's credential epoch (docs/storage.md §3.1). Two kinds of change can reach the file:
//   - this process's own writes: temporary triggers on this connection (never stored in the
//     file, so other processes neither see nor need them) call a function that moves the epoch
//     as the row is written — before its commit, so a rolled-back write only costs a re-read;
//   - another process's commits (`sigil` commands, an operator's shell): `PRAGMA data_version`
//     changes on this connection when another connection commits. Reading it is a read
//     transaction of its own (≈10 µs: WAL's shared-memory locks), so one reading serves every
//     request that arrived before it started.
// Inside a transaction of this connection the pragma would answer for the transaction's
// snapshot, so no new reading is taken there (a reading taken since the request arrived still serves).
import type BetterSqlite3 from "better-sqlite3";
import { CREDENTIAL_SOURCES, type CredentialWatch } from "../credential-watch.ts";

const FUNCTION = "sigil_credentials_changed";

function triggerStatements(): string[] {
  const out: string[] = [];
  for (const s of CREDENTIAL_SOURCES) {
    for (const event of s.events) {
      const on = event === "UPDATE" && s.columns ? `UPDATE OF ${s.columns.map((c) => `"${c}"`).join(", ")}` : event;
      out.push(
        `CREATE TEMP TRIGGER IF NOT EXISTS "sigil_credentials_${s.table}_${event.toLowerCase()}" AFTER ${on} ON main."${s.table}" ` +
          `FOR EACH ROW BEGIN SELECT ${FUNCTION}(); END`,
      );
    }
  }
  return out;
}

export function sqliteCredentialWatch(raw: BetterSqlite3.Database): CredentialWatch {
  let epoch = 1;
  let dataVersion: number | undefined;
  let schemaVersion: number | undefined;
  /** performance.now() when the last reading of data_version started. */
  let readAt = -Infinity;
  let pragmas: { data: BetterSqlite3.Statement; schema: BetterSqlite3.Statement } | undefined;
  raw.function(FUNCTION, { deterministic: false }, () => {
    epoch++;
    return null;
  });

  /** Reads data_version (and, when it moved, the schema version: a table rebuilt elsewhere drops its temporary triggers). */
  function read(): boolean {
    pragmas ??= { data: raw.prepare("PRAGMA data_version").pluck(), schema: raw.prepare("PRAGMA main.schema_version").pluck() };
    const started = performance.now();
    const dv = Number(pragmas.data.get());
    if (dv === dataVersion) {
      readAt = started;
      return true;
    }
    const sv = Number(pragmas.schema.get());
    if (sv !== schemaVersion) {
      // Before the tables exist (an unmigrated file) this throws: no epoch until they do.
      for (const statement of triggerStatements()) raw.exec(statement);
      schemaVersion = sv;
    }
    dataVersion = dv;
    epoch++;
    readAt = started;
    return true;
  }

  return {
    epoch(since) {
      if (readAt > since) return epoch;
      if (raw.inTransaction || !raw.open) return undefined;
      try {
        return read() ? epoch : undefined;
      } catch {
        // The connection is busy with an open iterator, or the schema is not there yet.
        return undefined;
      }
    },
    current: () => (dataVersion === undefined ? undefined : epoch),
    close: async () => {},
  };
}
