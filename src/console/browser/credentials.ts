/// <reference lib="dom" />
// What the console keeps, and where (docs/console.md §4.3):
// - a pasted API key: its hex in sessionStorage (this tab only; gone when the tab closes), imported
//   into WebCrypto as non-extractable at each load;
// - a passkey login's session key: the non-extractable CryptoKey in IndexedDB (structured
//   clone keeps it unreadable), with its public key and expiry — what @turnkey/core does;
// - localStorage: the last organization id only, to prefill the login form.
// Log out removes the first two.
import { importApiKey, type SigningKey } from "./stamps.ts";

export interface Session {
  kind: "api-key" | "passkey";
  /** The organization the credential was used with at login (whoami's answer names the user's own). */
  organizationId: string;
  key: SigningKey;
  /** Epoch ms after which the session key is refused (passkey sessions only). */
  expiresAt?: number;
}

const API_KEY_ITEM = "sigil-console.api-key";
const ORG_ITEM = "sigil-console.organization-id";
const DB_NAME = "sigil-console";
const STORE = "session";
const CURRENT = "current";

export const lastOrganizationId = (): string => {
  try {
    return localStorage.getItem(ORG_ITEM) ?? "";
  } catch {
    return "";
  }
};

export function rememberOrganizationId(id: string): void {
  try {
    localStorage.setItem(ORG_ITEM, id);
  } catch {
    /* storage refused (private mode): the field is simply not prefilled */
  }
}

export async function loginWithApiKey(organizationId: string, publicHex: string, privateHex: string): Promise<Session> {
  const key = await importApiKey(publicHex, privateHex);
  sessionStorage.setItem(API_KEY_ITEM, JSON.stringify({ organizationId, publicKey: publicHex.trim(), privateKey: privateHex.trim() }));
  return { kind: "api-key", organizationId, key };
}

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error("IndexedDB could not be opened"));
  });
}

async function idb<T>(mode: IDBTransactionMode, op: (s: IDBObjectStore) => IDBRequest): Promise<T> {
  const db = await openDb();
  try {
    return await new Promise<T>((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const req = op(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(req.result as T);
      tx.onerror = () => reject(tx.error ?? new Error("IndexedDB transaction failed"));
    });
  } finally {
    db.close();
  }
}

interface StoredSession {
  organizationId: string;
  publicKey: string;
  privateKey: CryptoKey;
  expiresAt: number;
}

export async function savePasskeySession(s: Session): Promise<void> {
  const stored: StoredSession = {
    organizationId: s.organizationId,
    publicKey: s.key.publicKey,
    privateKey: s.key.privateKey,
    expiresAt: s.expiresAt ?? 0,
  };
  await idb("readwrite", (st) => st.put(stored, CURRENT));
}

/** The session this tab may go on with: a pasted key first, then an unexpired passkey session. */
export async function restoreSession(): Promise<Session | undefined> {
  const raw = sessionStorage.getItem(API_KEY_ITEM);
  if (raw) {
    try {
      const v = JSON.parse(raw) as { organizationId: string; publicKey: string; privateKey: string };
      return { kind: "api-key", organizationId: v.organizationId, key: await importApiKey(v.publicKey, v.privateKey) };
    } catch {
      sessionStorage.removeItem(API_KEY_ITEM);
    }
  }
  try {
    const s = await idb<StoredSession | undefined>("readonly", (st) => st.get(CURRENT));
    if (s && s.expiresAt > Date.now())
      return {
        kind: "passkey",
        organizationId: s.organizationId,
        key: { publicKey: s.publicKey, privateKey: s.privateKey },
        expiresAt: s.expiresAt,
      };
    if (s) await idb("readwrite", (st) => st.delete(CURRENT));
  } catch {
    /* no IndexedDB: no passkey session to restore */
  }
  return undefined;
}

/** Log out: the pasted key and the session key are gone (the organization id stays, to prefill). */
export async function clearSession(): Promise<void> {
  sessionStorage.removeItem(API_KEY_ITEM);
  try {
    await idb("readwrite", (st) => st.delete(CURRENT));
  } catch {
    /* nothing stored */
  }
}
