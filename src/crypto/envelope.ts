// Envelope encryption for secrets at rest. Each secret gets its own random data key
// (AES-256-GCM); the data key is itself wrapped by the key-encryption key (KEK). Rotating the
// KEK therefore re-wraps small data keys, never the data (docs/custody.md §2).
//
// Sealed form (one ASCII string, safe in a TEXT column):
//   sgl1.<kekId>.<b64url wrapped data key>.<b64url iv‖ciphertext‖tag>
// `aad` binds a ciphertext to its row (e.g. "webhook-signing-key:<id>") so a sealed value
// copied into another row does not decrypt. The KEK is held in memory (LocalKey: the `env` and
// `file` sources) or stays on a PKCS#11 token (src/crypto/pkcs11/, docs/custody.md §1); either
// way it wraps through the Kek interface, asynchronously, so a token never blocks the event loop.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const VERSION = "sgl1";
/** The associated data a KEK wraps a data key under (every Kek applies it itself). */
export const kekAad = (aad: string) => `${VERSION}|kek|${aad}`;
const dataAad = (aad: string) => `${VERSION}|data|${aad}`;

/** A key-encryption key: wraps and unwraps data keys, wherever it lives. */
export interface Kek {
  /** Names the key in sealed values (16 characters, no "."). */
  readonly id: string;
  /** Sealed values naming one of these ids open with this key (its own id first). */
  readonly opens: readonly string[];
  wrap(dataKey: Buffer, aad: string): Promise<Buffer>;
  /** `id`: the one the sealed value names (one of `opens`). */
  unwrap(id: string, wrapped: Buffer, aad: string): Promise<Buffer>;
  /** Releases what the key holds open (a token session, a worker); idempotent. */
  close?(): Promise<void>;
}

/** A 32-byte key held in memory: the `env` and `file` master-key sources, and transport keys. */
export class LocalKey implements Kek {
  readonly id: string;
  readonly opens: readonly string[];
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("master key must be 32 bytes");
    this.#key = Buffer.from(key);
    // A short public fingerprint names the key in sealed values, so a wrong key is
    // reported as such instead of as a generic decryption failure.
    this.id = createHash("sha256").update("sigil-master-key-id").update(key).digest("hex").slice(0, 16);
    this.opens = [this.id];
  }

  /** Accepts 64 hex characters or base64/base64url of 32 bytes. */
  static parse(text: string): LocalKey {
    const t = text.trim();
    if (/^[0-9a-fA-F]{64}$/.test(t)) return new LocalKey(Buffer.from(t, "hex"));
    const b = Buffer.from(t, "base64");
    if (b.length === 32 && /^[A-Za-z0-9+/_-]+=*$/.test(t)) return new LocalKey(b);
    throw new Error("SIGIL_MASTER_KEY must be 32 bytes, given as 64 hex characters or base64");
  }

  toHex(): string {
    return this.#key.toString("hex");
  }

  /** The key's bytes (a copy): what the secrets derived from a local master key start from. */
  bytes(): Buffer {
    return Buffer.from(this.#key);
  }

  async wrap(dataKey: Buffer, aad: string): Promise<Buffer> {
    return gcmSeal(this.#key, dataKey, kekAad(aad));
  }

  async unwrap(_id: string, wrapped: Buffer, aad: string): Promise<Buffer> {
    return gcmOpen(this.#key, wrapped, kekAad(aad));
  }

  /** Seals synchronously (a transport key; the service's secrets go through MasterKey). */
  sealSync(plaintext: Buffer | string, aad: string): string {
    const dataKey = randomBytes(32);
    try {
      return format(this.id, gcmSeal(this.#key, dataKey, kekAad(aad)), gcmSeal(dataKey, Buffer.from(plaintext), dataAad(aad)));
    } finally {
      dataKey.fill(0);
    }
  }

  openSync(sealed: string, aad: string): Buffer {
    const p = parse(sealed);
    if (p.kekId !== this.id) throw new Error(`sealed with another master key (id ${p.kekId}, this key is ${this.id})`);
    const dataKey = gcmOpen(this.#key, p.wrapped, kekAad(aad));
    try {
      return gcmOpen(dataKey, p.body, dataAad(aad));
    } finally {
      dataKey.fill(0);
    }
  }
}

/**
 * The service's master key: seals with its first KEK and opens with any of them (during a
 * rotation both the old and the new key are here; docs/custody.md §4). Also holds the root
 * secret the service derives its HMAC keys from (OTP code digests, the proxy secret): a local
 * key's own bytes (as always), or, for a key that never leaves its token, a random secret
 * sealed under it in the database and opened at startup (src/crypto/root-secret.ts).
 */
export class MasterKey {
  readonly id: string;
  readonly #keks: readonly Kek[];
  #root: Buffer | undefined;

  constructor(keks: Kek | readonly Kek[], root?: Buffer) {
    this.#keks = Array.isArray(keks) ? [...(keks as readonly Kek[])] : [keks as Kek];
    if (this.#keks.length === 0) throw new Error("a master key needs a key-encryption key");
    this.id = this.#keks[0]!.id;
    const only = this.#keks.length === 1 ? this.#keks[0] : undefined;
    // One key held in memory: its bytes are the root (what Sigil always did). Otherwise the
    // root comes from the database (openService; docs/custody.md §2, §4).
    this.#root = root ?? (only instanceof LocalKey ? only.bytes() : undefined);
  }

  /**
   * The root a database without a stored one should keep: during a rotation away from a key
   * held in memory, that key's bytes (so OTP digests and the proxy secret stay valid); else
   * undefined (a new random root).
   */
  inheritedRoot(): Buffer | undefined {
    const local = [...this.#keks].reverse().find((k): k is LocalKey => k instanceof LocalKey);
    return local?.bytes();
  }

  /** The ids of every key this master key opens with (the sealing key's first). */
  get kekIds(): string[] {
    return this.#keks.flatMap((k) => k.opens);
  }

  /** The ids the sealing key goes by (a token key: one per mechanism). */
  get sealingIds(): readonly string[] {
    return this.#keks[0]!.opens;
  }

  /**
   * The same value with its data key re-wrapped by the sealing key (the body is untouched);
   * undefined when it is already wrapped by it (docs/custody.md §4).
   */
  async rewrap(sealed: string, aad: string): Promise<string | undefined> {
    const p = parse(sealed);
    const kek = this.#keks[0]!;
    if (p.kekId === kek.id) return undefined;
    const from = this.#keks.find((k) => k.opens.includes(p.kekId));
    if (!from) throw new Error(`sealed with another master key (id ${p.kekId}, this key is ${this.id})`);
    const dataKey = await from.unwrap(p.kekId, p.wrapped, aad);
    try {
      // The body must open with it under this aad, or the value is not this row's: left alone.
      gcmOpen(dataKey, p.body, dataAad(aad)).fill(0);
      return format(kek.id, await kek.wrap(dataKey, aad), p.body);
    } finally {
      dataKey.fill(0);
    }
  }

  /** Accepts 64 hex characters or base64/base64url of 32 bytes. */
  static parse(text: string): MasterKey {
    return new MasterKey(LocalKey.parse(text));
  }

  static generate(): MasterKey {
    return new MasterKey(new LocalKey(randomBytes(32)));
  }

  /** The KEK that seals. */
  get kek(): Kek {
    return this.#keks[0]!;
  }

  /** The key as 64 hex characters: only a key held in memory has them. */
  toHex(): string {
    const k = this.#keks[0];
    if (!(k instanceof LocalKey)) throw new Error("this master key stays on its token; it has no bytes to show");
    return k.toHex();
  }

  /** The root of the derived HMAC keys; throws until openService has set it up. */
  rootSecret(): Buffer {
    if (!this.#root) throw new Error("the master key's root secret is not open yet");
    return this.#root;
  }

  /** Set once, by openService (the token-held key's root secret, opened from the database). */
  setRootSecret(root: Buffer): void {
    if (root.length !== 32) throw new Error("root secret must be 32 bytes");
    this.#root = Buffer.from(root);
  }

  get hasRootSecret(): boolean {
    return this.#root !== undefined;
  }

  async seal(plaintext: Buffer | string, aad: string): Promise<string> {
    const kek = this.#keks[0]!;
    const dataKey = randomBytes(32);
    try {
      const wrapped = await kek.wrap(dataKey, aad);
      return format(kek.id, wrapped, gcmSeal(dataKey, Buffer.from(plaintext), dataAad(aad)));
    } finally {
      dataKey.fill(0);
    }
  }

  async open(sealed: string, aad: string): Promise<Buffer> {
    const p = parse(sealed);
    const kek = this.#keks.find((k) => k.opens.includes(p.kekId));
    if (!kek) throw new Error(`sealed with another master key (id ${p.kekId}, this key is ${this.id})`);
    const dataKey = await kek.unwrap(p.kekId, p.wrapped, aad);
    try {
      return gcmOpen(dataKey, p.body, dataAad(aad));
    } finally {
      dataKey.fill(0);
    }
  }

  /** The id a sealed value names (undefined: not a sealed value). */
  static kekIdOf(sealed: string): string | undefined {
    try {
      return parse(sealed).kekId;
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    for (const k of this.#keks) await k.close?.();
  }
}

function format(kekId: string, wrapped: Buffer, body: Buffer): string {
  return [VERSION, kekId, wrapped.toString("base64url"), body.toString("base64url")].join(".");
}

function parse(sealed: string): { kekId: string; wrapped: Buffer; body: Buffer } {
  const parts = sealed.split(".");
  if (parts.length !== 4 || parts[0] !== VERSION) throw new Error("not a sealed value");
  return { kekId: parts[1]!, wrapped: Buffer.from(parts[2]!, "base64url"), body: Buffer.from(parts[3]!, "base64url") };
}

function gcmSeal(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, iv);
  c.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(plaintext), c.final()]);
  return Buffer.concat([iv, ct, c.getAuthTag()]);
}

function gcmOpen(key: Buffer, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < 28) throw new Error("sealed value too short");
  const d = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, 12));
  d.setAAD(Buffer.from(aad));
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([d.update(sealed.subarray(12, sealed.length - 16)), d.final()]);
}
