import type { Kysely } from "kysely";

// HD wallets. A wallet holds its BIP-39 mnemonic sealed with the master key
// (nothing else secret is stored: account keys are derived from it on demand). Accounts
// record what was derived and where; the (organization, address) index serves look-ups by
// address (list_suborgs' WALLET_ACCOUNT_ADDRESS filter).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("wallets")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("seed_sealed", "text", (c) => c.notNull())
    .addColumn("mnemonic_length", "integer", (c) => c.notNull())
    .addColumn("imported", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("exported", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("wallets_org_name").on("wallets").columns(["organization_id", "name"]).unique().execute();

  await db.schema
    .createTable("wallet_accounts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("wallet_id", "text", (c) => c.notNull().references("wallets.id"))
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("curve", "text", (c) => c.notNull())
    .addColumn("path_format", "text", (c) => c.notNull())
    .addColumn("path", "text", (c) => c.notNull())
    .addColumn("address_format", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("name", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("wallet_accounts_wallet_path_format")
    .on("wallet_accounts")
    .columns(["wallet_id", "path", "address_format"])
    .unique()
    .execute();
  await db.schema.createIndex("wallet_accounts_org_address").on("wallet_accounts").columns(["organization_id", "address"]).execute();
  // list_suborgs' WALLET_ACCOUNT_ADDRESS filter starts from the address, across sub-organizations.
  await db.schema.createIndex("wallet_accounts_address").on("wallet_accounts").column("address").execute();
}
