import type { Kysely } from "kysely";
import { dialectOf } from "../engines.ts";

// organizations.keys_version: moves with every write to the organization's signing keys
// (wallets, their accounts, private keys and their addresses), by triggers, so no code path
// can forget it. A signature's key, found at submission (or remembered from an earlier one),
// is still the key when the signing transaction reads the same version with the organization's
// liveness (docs/signing.md §5). Adding a column with a constant default rewrites no table on
// either engine.
const KEY_TABLES = ["wallets", "wallet_accounts", "private_keys", "private_key_addresses"] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("organizations")
    .addColumn("keys_version", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  for (const table of KEY_TABLES) await dialectOf(db).createCounterTriggers(db, table, "keys_version");
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of KEY_TABLES) await dialectOf(db).dropCounterTriggers(db, table, "keys_version");
  await db.schema.alterTable("organizations").dropColumn("keys_version").execute();
}
