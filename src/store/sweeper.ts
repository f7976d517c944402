// Expired login records are dead weight: OTPs, verification tokens, limit slots, session
// keys and wallet import targets (docs/export-import.md §3.3) past their expiry (plus a grace period, so that a late request still meets a clear
// "expired" answer rather than "unknown"). `sigil serve` sweeps them periodically; every
// statement is a bounded-by-index delete, safe to run on several nodes at once.
import type { Executor } from "./schema.ts";

/** Kept this long after expiry: "expired" answers stay precise for a day. */
export const SWEEP_GRACE_MS = 24 * 3600 * 1000;

export interface Swept {
  otps: number;
  verificationTokens: number;
  limitSlots: number;
  sessionKeys: number;
  importTargets: number;
}

export async function sweepExpired(db: Executor, now: number, graceMs = SWEEP_GRACE_MS): Promise<Swept> {
  const before = now - graceMs;
  const count = (r: { numDeletedRows: bigint }[]) => r.reduce((n, x) => n + Number(x.numDeletedRows), 0);
  const otps = count(await db.deleteFrom("otps").where("expires_at", "<", before).execute());
  const verificationTokens = count(await db.deleteFrom("verification_tokens").where("expires_at", "<", before).execute());
  // A slot whose `until` passed is free either way; deleting it only trims the table.
  const limitSlots = count(await db.deleteFrom("limit_slots").where("until", "<", before).execute());
  // Session keys only: expiring API keys created by hand stay listed until deleted, or evicted
  // when their user gets new keys (docs/organizations.md §3.2).
  const sessionKeys = count(
    await db
      .deleteFrom("api_keys")
      .where("credential_type", "in", ["CREDENTIAL_TYPE_LOGIN", "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256"])
      .where("expires_at", "<", before)
      .execute(),
  );
  // Unused import targets: their sealed private keys go with them.
  const importTargets = count(await db.deleteFrom("import_targets").where("expires_at", "<", before).execute());
  return { otps, verificationTokens, limitSlots, sessionKeys, importTargets };
}
