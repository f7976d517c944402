// The `pkcs11` master-key source (docs/custody.md §1, §3): the key-encryption key is a
// non-extractable AES-256 key on a PKCS#11 token; data keys are wrapped and unwrapped by the
// token (AES-GCM with the row's associated data, or AES-KW-with-padding where the token offers
// no GCM), so the KEK never enters this process. Every token call runs on one worker thread
// (token.worker.mjs) with a deadline: a token that does not answer makes the call fail with
// KeyUnavailableError (503) while the event loop goes on; the worker reconnects by itself.
import { createHash, randomBytes } from "node:crypto";
import { Worker } from "node:worker_threads";
import { kekAad, type Kek } from "../envelope.ts";
import { KeyUnavailableError } from "../key-unavailable.ts";

export interface Pkcs11Settings {
  /** Path of the token's PKCS#11 library (e.g. /usr/lib/softhsm/libsofthsm2.so). */
  library: string;
  tokenLabel: string;
  keyLabel: string;
  /** The user PIN: from SIGIL_PKCS11_PIN or SIGIL_PKCS11_PIN_FILE, never a flag. */
  pin: string;
  /** How long one token call may take before it is answered 503 (ms). */
  timeoutMs: number;
  /** What wraps new data keys: AES-GCM when offered (auto), or the one named. */
  mechanism?: "auto" | "aes-gcm" | "aes-kw";
}

export interface TokenKeyInfo {
  valueLen: number;
  extractable: boolean;
  sensitive: boolean;
  /** CKA_CHECK_VALUE (hex), "" when the token keeps it to itself. */
  kcv: string;
  gcm: boolean;
  kw: boolean;
}

type Mech = "gcm" | "kw";

/** Threads stuck in the token library that may exist at once. [our choice] */
const MAX_ABANDONED = 2;

interface Reply {
  id: number;
  ok: boolean;
  out?: unknown;
  kind?: "unavailable" | "refused" | "config";
  message?: string;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** The worker thread and the calls out to it. */
export class TokenClient {
  readonly #settings: Pkcs11Settings;
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #next = 1;
  #closed = false;
  /** Threads given up on (a call stuck in the library) that have not exited yet. */
  #abandoned = 0;

  constructor(settings: Pkcs11Settings) {
    this.#settings = settings;
  }

  #start(): Worker {
    const { library, tokenLabel, keyLabel, pin } = this.#settings;
    // A plain .mjs (no tsx in workers); the bundle carries a copy next to main.mjs (scripts/build.mjs).
    const worker = new Worker(new URL("./token.worker.mjs", import.meta.url), { workerData: { library, tokenLabel, keyLabel, pin } });
    worker.unref();
    worker.on("message", (r: Reply) => {
      const p = this.#pending.get(r.id);
      if (!p) return;
      this.#settle(r.id);
      if (r.ok) p.resolve(r.out);
      else if (r.kind === "unavailable") p.reject(new KeyUnavailableError(r.message ?? "the token is unavailable"));
      else p.reject(new Error(r.message ?? "the token refused"));
    });
    const gone = (why: string) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      for (const [id, p] of [...this.#pending]) {
        this.#settle(id);
        p.reject(new KeyUnavailableError(`the token's thread ${why}`));
      }
    };
    worker.on("error", (err) => gone(`failed: ${err.message}`));
    worker.once("exit", (code) => {
      if (this.#worker !== worker) this.#abandoned = Math.max(0, this.#abandoned - 1);
      gone(`exited (${code})`);
    });
    return worker;
  }

  #settle(id: number): void {
    const p = this.#pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.#pending.delete(id);
    // Referenced only while a call is out: a one-shot command waits for its answer, an idle
    // server is not kept alive by the token.
    if (this.#pending.size === 0) this.#worker?.unref();
  }

  call<T>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.#closed) return Promise.reject(new KeyUnavailableError("the token is closed"));
    // Threads stuck in the library are bounded: past MAX_ABANDONED, calls fail at once until
    // one of them returns (a hung token holds them; docs/custody.md §3).
    if (!this.#worker && this.#abandoned >= MAX_ABANDONED) return Promise.reject(new KeyUnavailableError("the token is not answering"));
    const worker = (this.#worker ??= this.#start());
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#settle(id);
        reject(new KeyUnavailableError(`the token did not answer within ${this.#settings.timeoutMs} ms`));
        // A call stuck in the token library keeps its thread: the next call gets a new one
        // (the stuck thread is told to stop and is not waited for).
        if (this.#worker === worker) {
          this.#worker = undefined;
          this.#abandoned++;
          for (const [other, p] of [...this.#pending]) {
            this.#settle(other);
            p.reject(new KeyUnavailableError("the token did not answer"));
          }
          void worker.terminate().catch(() => {});
        }
      }, this.#settings.timeoutMs);
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      worker.ref();
      worker.postMessage({ id, op, ...args });
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const w = this.#worker;
    this.#worker = undefined;
    if (w) await w.terminate().catch(() => {});
  }
}

/** The id a token's key goes by in sealed values, per mechanism: public, stable, 16 characters. */
export function pkcs11KeyId(keyLabel: string, kcv: string, mech: Mech): string {
  return "p" + createHash("sha256").update(`sigil-pkcs11-kek\0${mech}\0${keyLabel}\0${kcv}`).digest("hex").slice(0, 15);
}

/** A key-encryption key that stays on its token. */
export class Pkcs11Kek implements Kek {
  readonly id: string;
  readonly opens: readonly string[];
  readonly #client: TokenClient;
  readonly #mechOf: ReadonlyMap<string, Mech>;

  private constructor(client: TokenClient, id: string, mechOf: Map<string, Mech>) {
    this.#client = client;
    this.id = id;
    this.#mechOf = mechOf;
    this.opens = [id, ...[...mechOf.keys()].filter((k) => k !== id)];
  }

  /** Connects, checks the key (AES-256, never extractable) and picks the mechanism: GCM, else AES-KW. */
  static async open(settings: Pkcs11Settings): Promise<Pkcs11Kek> {
    const client = new TokenClient(settings);
    try {
      const info = await client.call<TokenKeyInfo>("info");
      if (info.valueLen !== 32)
        throw new Error(`the token's key ${JSON.stringify(settings.keyLabel)} is AES-${info.valueLen * 8}; an AES-256 key is needed`);
      if (info.extractable || !info.sensitive) {
        throw new Error(
          `the token's key ${JSON.stringify(settings.keyLabel)} may leave the token (CKA_EXTRACTABLE or not CKA_SENSITIVE); create one that cannot`,
        );
      }
      if (!info.gcm && !info.kw) throw new Error("the token offers neither CKM_AES_GCM nor CKM_AES_KEY_WRAP_PAD");
      const want = settings.mechanism ?? "auto";
      if ((want === "aes-gcm" && !info.gcm) || (want === "aes-kw" && !info.kw))
        throw new Error(`SIGIL_PKCS11_MECHANISM=${want}: the token does not offer it`);
      const mechOf = new Map<string, Mech>();
      if (info.gcm) mechOf.set(pkcs11KeyId(settings.keyLabel, info.kcv, "gcm"), "gcm");
      if (info.kw) mechOf.set(pkcs11KeyId(settings.keyLabel, info.kcv, "kw"), "kw");
      const seals: Mech = want === "aes-kw" || !info.gcm ? "kw" : "gcm";
      return new Pkcs11Kek(client, pkcs11KeyId(settings.keyLabel, info.kcv, seals), mechOf);
    } catch (err) {
      await client.close();
      throw err;
    }
  }

  async wrap(dataKey: Buffer, aad: string): Promise<Buffer> {
    if (this.#mechOf.get(this.id) === "gcm") {
      const iv = randomBytes(12);
      const out = await this.#client.call<Uint8Array>("wrap", { mech: "gcm", iv, aad: Buffer.from(kekAad(aad)), data: dataKey });
      return Buffer.concat([iv, out]);
    }
    // AES-KW has no associated data: the row binding is the body's (envelope.ts).
    return Buffer.from(await this.#client.call<Uint8Array>("wrap", { mech: "kw", data: dataKey }));
  }

  async unwrap(id: string, wrapped: Buffer, aad: string): Promise<Buffer> {
    const mech = this.#mechOf.get(id);
    if (!mech) throw new Error(`sealed with another master key (id ${id}, this key is ${this.id})`);
    if (mech === "gcm") {
      if (wrapped.length < 28) throw new Error("sealed value too short");
      const out = await this.#client.call<Uint8Array>("unwrap", {
        mech,
        iv: wrapped.subarray(0, 12),
        aad: Buffer.from(kekAad(aad)),
        data: wrapped.subarray(12),
      });
      return Buffer.from(out);
    }
    return Buffer.from(await this.#client.call<Uint8Array>("unwrap", { mech, data: wrapped }));
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}

/** Generates the key-encryption key on the token (set-up; `sigil master-key create-pkcs11`). */
export async function createTokenKey(settings: Pkcs11Settings): Promise<TokenKeyInfo> {
  const client = new TokenClient(settings);
  try {
    return await client.call<TokenKeyInfo>("generate");
  } finally {
    await client.close();
  }
}
