// Remembered signers (docs/signing.md §5): what signWith named in an organization — the key
// row and, for a wallet account, its wallet — as read at a given version of the organization's
// signing keys (organizations.keys_version, moved by triggers with every write to wallets,
// wallet accounts, private keys and their addresses). An entry serves a request only when the
// request's own credential read found the same version, and the signing transaction executes
// with it only when its own read of the organization finds that version still: so a signature
// never uses a key that was deleted, exported or changed before its transaction, on any node,
// and most signatures read no key row at all. Nothing secret is held: rows as stored (the
// mnemonic and private keys sealed with the master key). Per store (service state).
import { Lru } from "../cache/lru.ts";
import type { Executor } from "../store/schema.ts";
import { requireSigner, type Signer } from "./resolve.ts";

/** [our choice: a signer is a row or two, a few KiB in all per hundred] */
export const SIGNER_CACHE_ENTRIES = 4_096;

/** A signer with the keys version it is known to be current for (undefined: not known). */
export interface VersionedSigner {
  signer: Signer;
  keysVersion?: number;
}

export class SignerCache {
  readonly #lru = new Lru<{ keysVersion: number; signer: Signer }>(SIGNER_CACHE_ENTRIES);

  /**
   * The signer signWith names in the organization: remembered when `keysVersion` (read by this
   * request, before this call) is the version it was found at, else read and remembered at that
   * version. Reads are never older than the version read before them, so a signer is never
   * labelled newer than it is. 404 for a name the organization does not hold (not remembered).
   */
  async resolve(db: Executor, organizationId: string, signWith: string, keysVersion: number | undefined): Promise<VersionedSigner> {
    const key = `${organizationId}\u0000${signWith}`;
    if (keysVersion !== undefined) {
      const hit = this.#lru.get(key);
      if (hit && hit.keysVersion === keysVersion) return hit;
    }
    const signer = await requireSigner(db, organizationId, signWith);
    if (keysVersion === undefined) return { signer };
    const entry = { keysVersion, signer };
    this.#lru.set(key, entry);
    return entry;
  }
}
