// The service's own P-256 keys, one active key per purpose (docs/logins.md §1): SESSION_JWT
// signs session tokens, OTP_ENCRYPTION_TARGET signs OTP target bundles, VERIFICATION_TOKEN
// signs verification tokens, OIDC_TOKEN signs the OIDC tokens oauth2_authenticate returns,
// OAUTH2_CLIENT_SECRET receives OAuth client secrets (clients encrypt to it), and
// BUNDLE_SIGNER signs wallet export bundles and import target bundles
// (docs/export-import.md §1). Private
// halves are sealed with the master key (AAD binds each to its id and purpose) and opened
// once per key into the per-store cache. Rotation mirrors the webhook keys: the new key
// becomes active, the previous one stays `published` (what it signed still verifies, and
// clients that pinned it keep working) until retired.
// GET /public/v1/discovery/keys publishes active and published keys without authentication.
import { randomBytes } from "node:crypto";
import type { MasterKey } from "../crypto/envelope.ts";
import { generateP256, p256FromPkcs8, toPkcs8, type P256Private } from "../crypto/p256.ts";
import type { Db, Executor, ServiceKeyPurpose } from "../store/schema.ts";
import { AAD } from "../crypto/aad.ts";

export const SERVICE_KEY_PURPOSES: readonly ServiceKeyPurpose[] = [
  "SESSION_JWT",
  "OTP_ENCRYPTION_TARGET",
  "VERIFICATION_TOKEN",
  "OAUTH2_CLIENT_SECRET",
  "OIDC_TOKEN",
  "BUNDLE_SIGNER",
];

export interface ServiceKey {
  id: string;
  purpose: ServiceKeyPurpose;
  signer: P256Private;
}

const aad = (id: string, purpose: ServiceKeyPurpose) => AAD.serviceKey(purpose, id);

export function isServiceKeyPurpose(v: string): v is ServiceKeyPurpose {
  return (SERVICE_KEY_PURPOSES as readonly string[]).includes(v);
}

async function createServiceKey(db: Executor, master: MasterKey, purpose: ServiceKeyPurpose, now: number): Promise<string> {
  const key = generateP256();
  const id = `svk_${randomBytes(12).toString("base64url")}`;
  await db
    .insertInto("service_keys")
    .values({
      id,
      purpose,
      public_key: key.publicUncompressed,
      private_key_sealed: await master.seal(toPkcs8(key), aad(id, purpose)),
      status: "active",
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

/** Opened keys, per store (on the service state): a sealed key is opened once, not per signature. */
export class ServiceKeyCache {
  readonly #active = new Map<ServiceKeyPurpose, ServiceKey>();
  /** Every purpose has had an active key (keys are never deleted, only demoted): checked once. */
  ensured = false;
  get(purpose: ServiceKeyPurpose): ServiceKey | undefined {
    return this.#active.get(purpose);
  }
  set(key: ServiceKey): void {
    this.#active.set(key.purpose, key);
  }
  /** Forget what was opened (after a rotation in this process). */
  clear(): void {
    this.#active.clear();
  }
}

const activeRow = (db: Executor, purpose: ServiceKeyPurpose) =>
  db
    .selectFrom("service_keys")
    .selectAll()
    .where("purpose", "=", purpose)
    .where("status", "=", "active")
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .executeTakeFirst();

/**
 * The key that signs for `purpose` now; created on first use (sigil serve creates them all at
 * start). One read per call (a rotation by another process or the CLI is seen at once); the
 * private key is opened once per key id.
 */
export async function activeServiceKey(
  cache: ServiceKeyCache,
  db: Executor,
  master: MasterKey,
  purpose: ServiceKeyPurpose,
  now = Date.now(),
): Promise<ServiceKey> {
  let row = await activeRow(db, purpose);
  if (!row) {
    // Through `db`, which may be an activity's transaction. Two first users racing on
    // PostgreSQL may both create one: both are then active, the newest signs, and both
    // verify (the next rotation demotes them together).
    await createServiceKey(db, master, purpose, now);
    row = await activeRow(db, purpose);
    if (!row) throw new Error(`no active ${purpose} service key`);
  }
  const opened = cache.get(purpose);
  if (opened?.id === row.id) return opened;
  const key: ServiceKey = { id: row.id, purpose, signer: p256FromPkcs8(await master.open(row.private_key_sealed, aad(row.id, purpose))) };
  cache.set(key);
  return key;
}

/** Creates the active key of every purpose that has none (sigil serve does it at start, so discovery is never empty). */
export async function ensureServiceKeys(cache: ServiceKeyCache, db: Db, master: MasterKey, now = Date.now()): Promise<void> {
  if (cache.ensured) return;
  const missing: ServiceKeyPurpose[] = [];
  for (const purpose of SERVICE_KEY_PURPOSES) if (!cache.get(purpose) && !(await activeRow(db, purpose))) missing.push(purpose);
  if (missing.length > 0) {
    await db.transaction().execute(async (tx) => {
      for (const purpose of missing) if (!(await activeRow(tx, purpose))) await createServiceKey(tx, master, purpose, now);
    });
  }
  cache.ensured = true;
}

/** Public keys that verify tokens of `purpose` (active and published), uncompressed hex. */
export async function verifyingKeys(db: Executor, purpose: ServiceKeyPurpose): Promise<string[]> {
  const rows = await db
    .selectFrom("service_keys")
    .select("public_key")
    .where("purpose", "=", purpose)
    .where("status", "in", ["active", "published"])
    .orderBy("created_at", "desc")
    .execute();
  return rows.map((r) => r.public_key);
}

/** As verifyingKeys, with each key's id (the `kid` of the issuer's JWKS), newest first. */
export async function verifyingKeyRecords(db: Executor, purpose: ServiceKeyPurpose): Promise<{ id: string; publicKey: string }[]> {
  const rows = await db
    .selectFrom("service_keys")
    .select(["id", "public_key"])
    .where("purpose", "=", purpose)
    .where("status", "in", ["active", "published"])
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map((r) => ({ id: r.id, publicKey: r.public_key }));
}

/** A new active key for each purpose given (all when none); the previous ones stay published. */
export async function rotateServiceKeys(
  db: Db,
  master: MasterKey,
  purposes: readonly ServiceKeyPurpose[] = SERVICE_KEY_PURPOSES,
  now = Date.now(),
) {
  return db.transaction().execute(async (tx) => {
    const out: { purpose: ServiceKeyPurpose; keyId: string }[] = [];
    for (const purpose of purposes) {
      await tx
        .updateTable("service_keys")
        .set({ status: "published", updated_at: now })
        .where("purpose", "=", purpose)
        .where("status", "=", "active")
        .execute();
      out.push({ purpose, keyId: await createServiceKey(tx, master, purpose, now) });
    }
    return out;
  });
}

/** Removes a key from the published set. The active key cannot be retired: rotate first. */
export async function retireServiceKey(db: Db, id: string, now = Date.now()): Promise<void> {
  const row = await db.selectFrom("service_keys").select("status").where("id", "=", id).executeTakeFirst();
  if (!row) throw new Error(`no service key ${id}`);
  if (row.status === "active") throw new Error(`key ${id} is an active service key; rotate first, then retire it`);
  await db.updateTable("service_keys").set({ status: "retired", updated_at: now }).where("id", "=", id).execute();
}

export async function listServiceKeys(db: Db) {
  return db
    .selectFrom("service_keys")
    .select(["id", "purpose", "status", "public_key", "created_at"])
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/** `GET /public/v1/discovery/keys`: `{"keys":[{keyId, purpose, publicKey, createdAt}]}`, active keys first. */
export async function discoveryDocument(
  db: Db,
): Promise<{ keys: { keyId: string; purpose: ServiceKeyPurpose; publicKey: string; createdAt: string; status: string }[] }> {
  const rows = await db
    .selectFrom("service_keys")
    .select(["id", "purpose", "public_key", "status", "created_at"])
    .where("status", "in", ["active", "published"])
    .orderBy("purpose")
    .orderBy("created_at", "desc")
    .execute();
  rows.sort((a, b) => (a.purpose === b.purpose ? (a.status === "active" ? -1 : b.status === "active" ? 1 : 0) : 0));
  return {
    keys: rows.map((r) => ({
      keyId: r.id,
      purpose: r.purpose,
      publicKey: r.public_key,
      createdAt: String(r.created_at),
      status: r.status,
    })),
  };
}
