// Every place a sealed value is stored, with the associated data that binds it to its row
// (docs/custody.md §2): written once here, for whatever must walk them all — the test that
// every stored value names its key and opens only in its own row, and a rotation re-wrapping
// each data key under a new key-encryption key (docs/custody.md §4). The associated data
// itself comes from src/crypto/aad.ts, the builders the sealing sites use.

import { AAD } from "./aad.ts";

export interface SealedValue {
  sealed: string;
  aad: string;
}

export interface SealedKind {
  /** What it is, for messages. */
  name: string;
  table: string;
  /** The column holding the sealed value, or JSON with sealed values inside. */
  column: string;
  /** The rows to read, when not all of the table's (sigil_meta's keys). */
  where?: { column: string; value: string };
  /** The sealed values of one row and the associated data each was sealed under. */
  values(row: Record<string, unknown>): SealedValue[];
}

const str = (row: Record<string, unknown>, column: string): string => String(row[column]);

/** A column holding one sealed value bound by `aad(row)`. */
function column(name: string, table: string, col: string, aad: (row: Record<string, unknown>) => string): SealedKind {
  return { name, table, column: col, values: (row) => [{ sealed: str(row, col), aad: aad(row) }] };
}

/** A sigil_meta row holding one sealed value. */
function meta(name: string, key: string, aad: string, inJson = false): SealedKind {
  return {
    name,
    table: "sigil_meta",
    column: "value",
    where: { column: "key", value: key },
    values: (row) => [{ sealed: inJson ? (JSON.parse(str(row, "value")) as { sealed: string }).sealed : str(row, "value"), aad }],
  };
}

/** Secret activity parameters sealed inside JSON: every sealed string and its path under `parameters` (docs/activities.md §10.2). */
function secretParams(name: string, table: string, col: string, rootOf: (json: unknown) => unknown): SealedKind {
  return {
    name,
    table,
    column: col,
    values(row) {
      let json: unknown;
      try {
        json = JSON.parse(str(row, col));
      } catch {
        return [];
      }
      const out: SealedValue[] = [];
      const walk = (v: unknown, path: string[]) => {
        if (typeof v === "string" && v.startsWith("sgl1."))
          out.push({ sealed: v, aad: AAD.secretParam(str(row, "activity_id" in row ? "activity_id" : "id"), path.join(".")) });
        else if (v && typeof v === "object" && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
      };
      walk(rootOf(json), []);
      return out;
    },
  };
}

export const SEALED_KINDS: readonly SealedKind[] = [
  column("wallet mnemonic", "wallets", "seed_sealed", (r) => AAD.walletSeed(str(r, "id"))),
  column("private key", "private_keys", "key_sealed", (r) => AAD.privateKey(str(r, "id"))),
  column("service key", "service_keys", "private_key_sealed", (r) => AAD.serviceKey(str(r, "purpose"), str(r, "id"))),
  column("OTP target key", "otps", "target_private_key_sealed", (r) => AAD.otpTarget(str(r, "id"))),
  column("import target key", "import_targets", "private_key_sealed", (r) => AAD.importTarget(str(r, "id"))),
  column("OAuth client secret", "oauth2_credentials", "client_secret_sealed", (r) => AAD.oauth2ClientSecret(str(r, "id"))),
  column("auth proxy key", "auth_proxy_configs", "private_key_sealed", (r) => AAD.authProxyKey(str(r, "id"))),
  column("webhook signing key", "webhook_signing_keys", "private_key_sealed", (r) => AAD.webhookSigningKey(str(r, "id"))),
  secretParams("secret parameter (intent)", "activities", "intent", (j) => j),
  secretParams("secret parameter (vote)", "votes", "message", (j) =>
    j && typeof j === "object" ? (j as { parameters?: unknown }).parameters : undefined,
  ),
  meta("master key canary", "master_key_canary", AAD.masterKeyCanary),
  meta("root secret", "master_key_root", AAD.masterKeyRoot),
  meta("app proof key", "app_proof_key", AAD.appProofKey, true),
];
