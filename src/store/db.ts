// The store, whichever engine holds it: openStore picks the engine by DATABASE_URL from the
// list in store/engines.ts (docs/storage.md §1), and every engine runs the same migrations and
// the same Kysely queries. Nothing here knows an engine.
import { Migrator, type Migration, type MigrationProvider } from "kysely";
import type { Db } from "./schema.ts";
import * as m001 from "./migrations/001_foundation.ts";
import * as m002 from "./migrations/002_policies.ts";
import * as m003 from "./migrations/003_webhooks.ts";
import * as m004 from "./migrations/004_app_proofs.ts";
import * as m005 from "./migrations/005_webhook_retries.ts";
import * as m006 from "./migrations/006_logins.ts";
import * as m007 from "./migrations/007_wallets.ts";
import * as m008 from "./migrations/008_ip_allowlists.ts";
import * as m009 from "./migrations/009_oauth.ts";
import * as m010 from "./migrations/010_tvc.ts";
import * as m011 from "./migrations/011_votes_index.ts";
import * as m012 from "./migrations/012_contact_verification.ts";
import * as m013 from "./migrations/013_otp_limits.ts";
import * as m014 from "./migrations/014_oauth_identity_audience.ts";
import * as m015 from "./migrations/015_session_allowlist.ts";
import * as m016 from "./migrations/016_auth_proxy.ts";
import * as m017 from "./migrations/017_private_keys.ts";
import * as m018 from "./migrations/018_import_targets.ts";
import * as m019 from "./migrations/019_organization_features.ts";
import * as m020 from "./migrations/020_session_profiles.ts";
import * as m021 from "./migrations/021_mfa_policies.ts";
import * as m023 from "./migrations/023_invitations.ts";
import * as m024 from "./migrations/024_keys_version.ts";
import * as m025 from "./migrations/025_key_provenance.ts";
import * as m026 from "./migrations/026_unvouch_proxy_signups.ts";
import * as m027 from "./migrations/027_credential_notices.ts";
import { DEFAULT_STORE_TIMEOUTS, type OpenedStore, type StoreTimeouts } from "./engine.ts";
import { engineFor, isStoreUnavailable, type Engine } from "./engines.ts";

export { StoreUnavailableError } from "./transactions.ts";
export { DEFAULT_STORE_TIMEOUTS, isStoreUnavailable };
export type { Engine, StoreTimeouts };

export interface Store extends OpenedStore {
  /** The engine's name ("sqlite", "postgres"): for logs and readiness. What differs between
   * the engines is asked of the dialect (dialectOf in store/engines.ts), never of this. */
  engine: Engine;
}

const MIGRATIONS: Record<string, Migration> = {
  "001_foundation": m001,
  "002_policies": m002,
  "003_webhooks": m003,
  "004_app_proofs": m004,
  "005_webhook_retries": m005,
  "006_logins": m006,
  "007_wallets": m007,
  "008_ip_allowlists": m008,
  "009_oauth": m009,
  "010_tvc": m010,
  "011_votes_index": m011,
  "012_contact_verification": m012,
  "013_otp_limits": m013,
  "014_oauth_identity_audience": m014,
  "015_session_allowlist": m015,
  "016_auth_proxy": m016,
  "017_private_keys": m017,
  "018_import_targets": m018,
  "019_organization_features": m019,
  "020_session_profiles": m020,
  "021_mfa_policies": m021,
  "023_invitations": m023,
  "024_keys_version": m024,
  "025_key_provenance": m025,
  "026_unvouch_proxy_signups": m026,
  "027_credential_notices": m027,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

/** Opens the store on the engine DATABASE_URL names; throws, naming the schemes, for an unknown one. */
export function openStore(opts: { databaseUrl?: string; dataDir: string; poolSize?: number; timeouts?: Partial<StoreTimeouts> }): Store {
  const engine = engineFor(opts.databaseUrl);
  const opened = engine.open({
    databaseUrl: opts.databaseUrl,
    dataDir: opts.dataDir,
    poolSize: opts.poolSize,
    timeouts: { ...DEFAULT_STORE_TIMEOUTS, ...opts.timeouts },
  });
  return { ...opened, engine: engine.name };
}

export async function migrate(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error");
    throw new Error(`database migration ${failed?.migrationName ?? ""} failed: ${(error as Error).message ?? error}`);
  }
}
