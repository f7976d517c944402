// What a remembered credential look-up may rely on (docs/storage.md §3.1): a number, the epoch,
// that moves whenever a row a stamp's credential look-up reads may have changed, on any node
// and in any process. The engines keep it (sqlite/credential-watch.ts, postgres/credential-watch.ts);
// the credential cache (auth/credential-cache.ts) serves a look-up from memory only when the
// epoch a request obtained is the one its entry was read at.
//
// The epoch a request obtains must cover every change committed before the request arrived:
// a check of the store that *started* after the request's arrival (a SQLite pragma, a
// PostgreSQL round trip on the listening connection) does, and one check serves every request
// that arrived before it started — so under load one check is shared by many requests.

/** PostgreSQL NOTIFY channel: a credential-bearing row changed (migration 027's triggers). */
export const CREDENTIAL_CHANNEL = "sigil_credentials";

export type ChangeEvent = "INSERT" | "UPDATE" | "DELETE";

/**
 * The rows the API-key look-up reads (auth/api-key-stamp.ts: the key, its user, the user's
 * organization, the auth proxy's configuration), and the writes that can change its answer.
 * A new user or organization has no key until one is inserted; an organization's name, its
 * IP allowlist version and its parent are all the look-up reads of it (keys_version and
 * policy_version move with every wallet and policy write and are not read).
 */
export const CREDENTIAL_SOURCES: readonly { table: string; events: readonly ChangeEvent[]; columns?: readonly string[] }[] = [
  { table: "api_keys", events: ["INSERT", "UPDATE", "DELETE"] },
  { table: "users", events: ["UPDATE", "DELETE"] },
  { table: "organizations", events: ["UPDATE", "DELETE"], columns: ["name", "ip_allowlist_version", "parent_id"] },
  { table: "auth_proxy_configs", events: ["INSERT", "UPDATE", "DELETE"] },
];

export interface CredentialWatch {
  /**
   * The epoch covering every change committed before `since` (a performance.now() reading
   * taken when the request arrived), or undefined when this process cannot vouch for one now
   * (SQLite: inside a transaction; PostgreSQL: not listening): then the store is read.
   */
  epoch(since: number): number | undefined | Promise<number | undefined>;
  /** The epoch as last known, without checking the store: a look-up read after epoch e may be kept only while this is still e. */
  current(): number | undefined;
  /** Ends what the watch opened (PostgreSQL: its listening connection). */
  close(): Promise<void>;
}

/** Never vouches: every look-up reads the store. */
export const NO_WATCH: CredentialWatch = {
  epoch: () => undefined,
  current: () => undefined,
  close: async () => {},
};
