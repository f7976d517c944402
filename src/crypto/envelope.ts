// Envelope encryption for secrets at rest. Each secret gets its own random data key
// (AES-256-GCM); the data key is itself sealed with the master key (the key-encryption
// key). Rotating the master key therefore re-wraps small data keys, never the data.
//
// Sealed form (one ASCII string, safe in a TEXT column):
//   sgl1.<kekId>.<b64url wrapped data key: iv‖ct‖tag>.<b64url iv‖ciphertext‖tag>
// `aad` binds a ciphertext to its row (e.g. "webhook-signing-key:<id>") so a sealed value
// copied into another row does not decrypt.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const VERSION = "sgl1";

export class MasterKey {
  readonly id: string;
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error("master key must be 32 bytes");
    this.#key = Buffer.from(key);
    // A short public fingerprint names the key in sealed values, so a wrong key is
    // reported as such instead of as a generic decryption failure.
    this.id = createHash("sha256").update("sigil-master-key-id").update(key).digest("hex").slice(0, 16);
  }

  /** Accepts 64 hex characters or base64/base64url of 32 bytes. */
  static parse(text: string): MasterKey {
    const t = text.trim();
    if (/^[0-9a-fA-F]{64}$/.test(t)) return new MasterKey(Buffer.from(t, "hex"));
    const b = Buffer.from(t, "base64");
    if (b.length === 32 && /^[A-Za-z0-9+/_-]+=*$/.test(t)) return new MasterKey(b);
    throw new Error("SIGIL_MASTER_KEY must be 32 bytes, given as 64 hex characters or base64");
  }

  static generate(): MasterKey {
    return new MasterKey(randomBytes(32));
  }

  toHex(): string {
    return this.#key.toString("hex");
  }

  seal(plaintext: Buffer | string, aad: string): string {
    const dataKey = randomBytes(32);
    const wrapped = gcmSeal(this.#key, dataKey, `${VERSION}|kek|${aad}`);
    const body = gcmSeal(dataKey, Buffer.from(plaintext), `${VERSION}|data|${aad}`);
    dataKey.fill(0);
    return [VERSION, this.id, wrapped.toString("base64url"), body.toString("base64url")].join(".");
  }

  open(sealed: string, aad: string): Buffer {
    const parts = sealed.split(".");
    if (parts.length !== 4 || parts[0] !== VERSION) throw new Error("not a sealed value");
    if (parts[1] !== this.id) throw new Error(`sealed with another master key (id ${parts[1]}, this key is ${this.id})`);
    const dataKey = gcmOpen(this.#key, Buffer.from(parts[2]!, "base64url"), `${VERSION}|kek|${aad}`);
    try {
      return gcmOpen(dataKey, Buffer.from(parts[3]!, "base64url"), `${VERSION}|data|${aad}`);
    } finally {
      dataKey.fill(0);
    }
  }
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
