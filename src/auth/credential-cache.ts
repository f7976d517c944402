// Remembered credential look-ups (docs/storage.md §3.1): the rows an API-key stamp's look-up
// found for a public key, served from memory while the store's credential epoch
// (store/credential-watch.ts) is the one they were read at. Everything the look-up's rows feed
// — which holder the scope picks, expiry against the request's clock, the registration ranking
// and its store reads, the first-use write — runs on every request as before; only the
// statement is saved.
//
// Only look-ups that found something are kept, so unknown keys (anyone can sign with a fresh
// one) never enter it, and the bound holds whatever a tenant registers. Rows are frozen: every
// request shares them. Per store (service state).
import { Lru } from "../cache/lru.ts";
import type { CredentialWatch } from "../store/credential-watch.ts";

/** [our choice: a look-up is one to a few rows of some twenty columns, about 1 KiB; 8,192 of them ≈ 8 MiB] */
export const CREDENTIAL_CACHE_ENTRIES = 8_192;

export class CredentialCache {
  readonly #lru: Lru<{ epoch: number; rows: readonly unknown[] }>;
  /** The newest epoch seen: older entries can never be served again and are dropped when it moves. */
  #newest = 0;

  constructor(
    readonly watch: CredentialWatch,
    max = CREDENTIAL_CACHE_ENTRIES,
  ) {
    this.#lru = new Lru(max);
  }

  /**
   * The rows `read` would return for `key` now: remembered when the epoch the request obtains
   * (covering every change committed before `since`, its arrival on performance.now()'s clock)
   * is the one they were read at, else read and — when they are not empty and no change was
   * noticed meanwhile — remembered at that epoch.
   */
  async rows<R extends object>(key: string, since: number, read: () => Promise<readonly R[]>): Promise<readonly R[]> {
    if (this.#lru.max === 0) return read();
    const pending = this.watch.epoch(since);
    const epoch = pending instanceof Promise ? await pending : pending;
    if (epoch === undefined) return read();
    if (epoch > this.#newest) {
      this.#newest = epoch;
      this.#lru.clear();
    }
    const hit = this.#lru.get(key);
    if (hit && hit.epoch === epoch) return hit.rows as readonly R[];
    const rows = await read();
    if (rows.length > 0 && this.watch.current() === epoch && epoch >= this.#newest) {
      this.#lru.set(key, { epoch, rows: Object.freeze(rows.map((r) => Object.freeze({ ...r }))) });
    }
    return rows;
  }

  get size(): number {
    return this.#lru.size;
  }
}
