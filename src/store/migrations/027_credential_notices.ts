import type { Kysely } from "kysely";
import { dialectOf } from "../engines.ts";
import { CREDENTIAL_CHANNEL, CREDENTIAL_SOURCES } from "../credential-watch.ts";

// PostgreSQL: every write to a row the API-key look-up reads (store/credential-watch.ts lists
// them) is announced on CREDENTIAL_CHANNEL at commit, by triggers, so no code path can forget
// it; each node's credential watch listens, and forgets the look-ups it remembers
// (docs/storage.md §3.1). SQLite needs nothing in the file: its watch makes temporary
// triggers on its own connection.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const s of CREDENTIAL_SOURCES) await dialectOf(db).createNoticeTriggers(db, s.table, CREDENTIAL_CHANNEL, s.events, s.columns);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const s of CREDENTIAL_SOURCES) await dialectOf(db).dropNoticeTriggers(db, s.table, CREDENTIAL_CHANNEL);
}
