// Private keys (docs/signing.md §3): rows, views as the SDK reads them (v1PrivateKey) and
// creation. The key itself is generated here, sealed with the master key bound to its id
// ("private-key:<id>") and never logged, returned or stored plain.
import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists, exhausted, invalid, notFound } from "../errors.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import { Name, Timestamp, maxItems, Id } from "../schemas/common.ts";
import { lockingRead, lockOrganization } from "../store/locks.ts";
import type { Executor, PrivateKeysTable, Tx } from "../store/schema.ts";
import { isUniqueViolation, newOrderedId, timestampObject } from "../store/util.ts";
import { addressOf, formatProblem, type AddressFormat } from "../wallets/derivation.ts";
import { newKeyPair, type SigningCurve } from "./sign.ts";
import { WalletCurveSchema } from "../wallets/accounts.ts";
import { AAD } from "../crypto/aad.ts";

/** Private keys one organization may hold. [our choice] */
export const MAX_PRIVATE_KEYS_PER_ORGANIZATION = 1000;
/** Keys one create_private_keys may create. [our choice] */
export const MAX_PRIVATE_KEYS_PER_REQUEST = 100;

export const sealAad = AAD.privateKey;

export const PrivateKeyParams = Type.Object({
  privateKeyName: Name("privateKeyName"),
  curve: WalletCurveSchema,
  privateKeyTags: maxItems(Id("private key tag"), "privateKeyTags", 100),
  addressFormats: maxItems(
    Type.String({ minLength: 1, maxLength: 64, errorMessage: "must be an ADDRESS_FORMAT_* value" }),
    "addressFormats",
    10,
  ),
});
export type PrivateKeyParamsT = Static<typeof PrivateKeyParams>;

const Address = Type.Object({ format: Type.String(), address: Type.String() });

export const PrivateKeySchema = Type.Object({
  privateKeyId: Type.String(),
  publicKey: Type.String(),
  privateKeyName: Type.String(),
  curve: Type.String(),
  addresses: Type.Array(Address),
  privateKeyTags: Type.Array(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  exported: Type.Boolean(),
  imported: Type.Boolean(),
});

export const PrivateKeyResult = Type.Object({ privateKeyId: Type.String(), addresses: Type.Array(Address) });

/** Curve/format problems and repeated names, field by field (before any policy is consulted). */
export function checkPrivateKeys(keys: readonly PrivateKeyParamsT[], field: string): void {
  const names = new Map<string, number>();
  keys.forEach((k, i) => {
    k.addressFormats.forEach((f, j) => {
      const problem = formatProblem(k.curve, f);
      if (problem)
        throw invalid(`${field}[${i}].addressFormats[${j}]: ${problem}`, [
          { field: `${field}[${i}].addressFormats[${j}]`, description: problem },
        ]);
    });
    const first = names.get(k.privateKeyName);
    if (first !== undefined) throw alreadyExists(`${field}[${i}].privateKeyName: same name as ${field}[${first}]`);
    names.set(k.privateKeyName, i);
  });
}

/**
 * With `imported` (one key: import_private_key, docs/export-import.md §3.5), the key holds that
 * key pair instead of a new one and is marked imported; the caller zeroes its private key.
 */
export async function createPrivateKeys(
  w: { tx: Tx; organizationId: string; masterKey: MasterKey; now: number },
  keys: readonly PrivateKeyParamsT[],
  field: string,
  imported?: { privateKey: Uint8Array; publicKey: Uint8Array },
): Promise<{ privateKeyId: string; addresses: { format: string; address: string }[] }[]> {
  checkPrivateKeys(keys, field);
  await lockOrganization(w.tx, w.organizationId);
  const tagIds = [...new Set(keys.flatMap((k) => k.privateKeyTags))].sort();
  if (tagIds.length) {
    const q = w.tx
      .selectFrom("private_key_tags")
      .select("id")
      .where("organization_id", "=", w.organizationId)
      .where("id", "in", tagIds)
      .orderBy("id");
    const found = new Set((await lockingRead(w.tx, q, "shared").execute()).map((r) => r.id));
    const missing = tagIds.find((id) => !found.has(id));
    if (missing) throw notFound(`no private key tag ${missing} in organization ${w.organizationId}`);
  }
  const r = await w.tx
    .selectFrom("private_keys")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("organization_id", "=", w.organizationId)
    .executeTakeFirst();
  if (Number(r?.n ?? 0) + keys.length > MAX_PRIVATE_KEYS_PER_ORGANIZATION) {
    throw exhausted(`organization ${w.organizationId} may hold at most ${MAX_PRIVATE_KEYS_PER_ORGANIZATION} private keys`);
  }
  const results = [];
  for (const [i, k] of keys.entries()) {
    const id = newOrderedId(w.now);
    const pair = imported
      ? { privateKey: Uint8Array.from(imported.privateKey), publicKey: imported.publicKey }
      : newKeyPair(k.curve as SigningCurve);
    let addresses: { format: string; address: string }[];
    let sealed: string;
    try {
      const key = { curve: k.curve as SigningCurve, publicKey: pair.publicKey, privateKey: pair.privateKey };
      addresses = k.addressFormats.map((format) => ({ format, address: addressOf(key, format as AddressFormat) }));
      const plain = Buffer.from(pair.privateKey);
      try {
        sealed = await w.masterKey.seal(plain, sealAad(id));
      } finally {
        plain.fill(0);
      }
    } finally {
      pair.privateKey.fill(0);
    }
    const row: PrivateKeysTable = {
      id,
      organization_id: w.organizationId,
      name: k.privateKeyName,
      curve: k.curve,
      public_key: Buffer.from(pair.publicKey).toString("hex"),
      key_sealed: sealed,
      imported: imported ? 1 : 0,
      exported: 0,
      created_at: w.now,
      updated_at: w.now,
    };
    try {
      await w.tx.insertInto("private_keys").values(row).execute();
    } catch (err) {
      if (isUniqueViolation(err, "private_keys"))
        throw alreadyExists(`${field}[${i}].privateKeyName: a private key named ${JSON.stringify(k.privateKeyName)} already exists`);
      throw err;
    }
    if (addresses.length) {
      await w.tx
        .insertInto("private_key_addresses")
        .values(
          addresses.map((a, position) => ({
            private_key_id: id,
            organization_id: w.organizationId,
            position,
            format: a.format,
            address: a.address,
          })),
        )
        .execute();
    }
    const tags = [...new Set(k.privateKeyTags)];
    if (tags.length)
      await w.tx
        .insertInto("private_key_tag_members")
        .values(tags.map((tag_id) => ({ tag_id, private_key_id: id })))
        .execute();
    results.push({ privateKeyId: id, addresses });
  }
  return results;
}

/** The private key in memory (a copy: the caller zeroes it). */
export async function openPrivateKey(masterKey: MasterKey, row: Pick<PrivateKeysTable, "id" | "key_sealed">): Promise<Uint8Array> {
  const buf = await masterKey.open(row.key_sealed, sealAad(row.id));
  const out = Uint8Array.from(buf);
  buf.fill(0);
  return out;
}

/** Views of private keys, in the order of `rows`. */
export async function privateKeyViews(db: Executor, rows: readonly PrivateKeysTable[]) {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const addrs = await db.selectFrom("private_key_addresses").selectAll().where("private_key_id", "in", ids).orderBy("position").execute();
  const tags = await db.selectFrom("private_key_tag_members").selectAll().where("private_key_id", "in", ids).orderBy("tag_id").execute();
  return rows.map((r) => ({
    privateKeyId: r.id,
    publicKey: r.public_key,
    privateKeyName: r.name,
    curve: r.curve,
    addresses: addrs.filter((a) => a.private_key_id === r.id).map((a) => ({ format: a.format, address: a.address })),
    privateKeyTags: tags.filter((t) => t.private_key_id === r.id).map((t) => t.tag_id),
    createdAt: timestampObject(r.created_at),
    updatedAt: timestampObject(r.updated_at),
    exported: r.exported === 1,
    imported: r.imported === 1,
  }));
}

/** Deletes private keys (ids of the organization) with their addresses and tag memberships. */
export async function deletePrivateKeyRows(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .deleteFrom("private_key_tag_members")
    .where("private_key_id", "in", [...ids])
    .execute();
  await db
    .deleteFrom("private_key_addresses")
    .where("private_key_id", "in", [...ids])
    .execute();
  await db
    .deleteFrom("private_keys")
    .where("id", "in", [...ids])
    .execute();
}
