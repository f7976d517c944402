// Ed25519 webhook signing keys. The private halves are sealed with the master key (AAD
// binds each to its id) and opened only in memory to sign. Rotation: a new key becomes
// `active`, the previous one stays `published` in the key set so receivers can still
// verify deliveries it signed, until an operator retires it.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import type { MasterKey } from "../crypto/envelope.ts";
import type { Db, Executor } from "../store/schema.ts";
import { AAD } from "../crypto/aad.ts";

export const SIGNATURE_ALGORITHM = "ed25519";
export const SIGNATURE_VERSION = "v1";

export interface SigningKey {
  id: string;
  privateKey: KeyObject;
}

const aad = AAD.webhookSigningKey;

function newKeyId(): string {
  return `whk_${randomBytes(12).toString("base64url")}`;
}

export async function createSigningKey(db: Executor, master: MasterKey, now: number): Promise<string> {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const id = newKeyId();
  const x = publicKey.export({ format: "jwk" }).x!;
  const der = privateKey.export({ format: "der", type: "pkcs8" });
  await db
    .insertInto("webhook_signing_keys")
    .values({ id, public_key: x, private_key_sealed: await master.seal(der, aad(id)), status: "active", created_at: now, updated_at: now })
    .execute();
  return id;
}

/** The key that signs now; created on first use. */
export async function activeSigningKey(cache: SigningKeyCache, db: Db, master: MasterKey, now = Date.now()): Promise<SigningKey> {
  let row = await db
    .selectFrom("webhook_signing_keys")
    .selectAll()
    .where("status", "=", "active")
    .orderBy("created_at", "desc")
    .executeTakeFirst();
  if (!row) {
    await db.transaction().execute(async (tx) => {
      const again = await tx.selectFrom("webhook_signing_keys").select("id").where("status", "=", "active").executeTakeFirst();
      if (!again) await createSigningKey(tx, master, now);
    });
    row = await db
      .selectFrom("webhook_signing_keys")
      .selectAll()
      .where("status", "=", "active")
      .orderBy("created_at", "desc")
      .executeTakeFirstOrThrow();
  }
  const opened = cache.opened;
  if (opened?.id === row.id) return opened;
  const der = await master.open(row.private_key_sealed, aad(row.id));
  cache.opened = { id: row.id, privateKey: createPrivateKey({ key: der, format: "der", type: "pkcs8" }) };
  return cache.opened;
}

/**
 * The last key opened, per store (on the service state): the sealed form is opened once per
 * key, not per signature.
 */
export class SigningKeyCache {
  opened: SigningKey | undefined;
}

/** A new active key; the previous active one stays published until retired. */
export async function rotateSigningKey(db: Db, master: MasterKey, now = Date.now()): Promise<string> {
  return db.transaction().execute(async (tx) => {
    await tx.updateTable("webhook_signing_keys").set({ status: "published", updated_at: now }).where("status", "=", "active").execute();
    return createSigningKey(tx, master, now);
  });
}

/** Removes a key from the published set. The active key cannot be retired: rotate first. */
export async function retireSigningKey(db: Db, id: string, now = Date.now()): Promise<void> {
  const row = await db.selectFrom("webhook_signing_keys").select("status").where("id", "=", id).executeTakeFirst();
  if (!row) throw new Error(`no webhook signing key ${id}`);
  if (row.status === "active") throw new Error(`key ${id} is the active signing key; rotate first, then retire it`);
  await db.updateTable("webhook_signing_keys").set({ status: "retired", updated_at: now }).where("id", "=", id).execute();
}

export async function listSigningKeys(db: Db) {
  return db.selectFrom("webhook_signing_keys").select(["id", "status", "created_at", "updated_at"]).orderBy("created_at").execute();
}

/** The published key set (RFC 7517), exactly the fields of docs/webhooks.md §3. */
export async function jwks(db: Db): Promise<{ keys: Record<string, string>[] }> {
  const rows = await db
    .selectFrom("webhook_signing_keys")
    .select(["id", "public_key"])
    .where("status", "in", ["active", "published"])
    .orderBy("created_at", "desc")
    .execute();
  return {
    keys: rows.map((r) => ({
      kid: r.id,
      kty: "OKP",
      crv: "Ed25519",
      alg: "EdDSA",
      use: "sig",
      x: r.public_key,
      service_signature_algorithm: SIGNATURE_ALGORITHM,
      service_signature_version: SIGNATURE_VERSION,
    })),
  };
}

/** `v1.ed25519.<key_id>.<timestamp_ms>.<event_id>.<raw_body>` */
export function signedMessage(keyId: string, timestampMs: string, eventId: string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${SIGNATURE_VERSION}.${SIGNATURE_ALGORITHM}.${keyId}.${timestampMs}.${eventId}.`), body]);
}

export function signDelivery(key: SigningKey, timestampMs: string, eventId: string, body: Buffer): string {
  return sign(null, signedMessage(key.id, timestampMs, eventId, body), key.privateKey).toString("hex");
}

export function publicKeyObject(x: string): KeyObject {
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
}
