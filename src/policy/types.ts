// Static types of the policy language and the keyword environment of each
// field (docs/policy-language.md §3.1, §4.1–4.4).

import type { Field } from "./errors.ts";

export type Type =
  | { readonly k: "bool" }
  | { readonly k: "int" }
  | { readonly k: "uint" }
  | { readonly k: "string" }
  | { readonly k: "timestamp" }
  /** `elem` is null for an empty list literal whose element type nothing fixed. */
  | { readonly k: "list"; readonly elem: Type | null }
  | { readonly k: "struct"; readonly name: string; readonly fields: Readonly<Record<string, Type>> }
  /** `activity.params`: a per-activity-type struct; any field name type-checks and is looked up at runtime. */
  | { readonly k: "params" }
  /** A value read through `activity.params`: string, int, bool or a list of those, checked at runtime. */
  | { readonly k: "dynamic" };

export const BOOL: Type = { k: "bool" };
export const INT: Type = { k: "int" };
export const UINT: Type = { k: "uint" };
export const STRING: Type = { k: "string" };
export const TIMESTAMP: Type = { k: "timestamp" };
export const PARAMS: Type = { k: "params" };
export const DYNAMIC: Type = { k: "dynamic" };
export const listOf = (elem: Type | null): Type => ({ k: "list", elem });

export const USER: Type = {
  k: "struct",
  name: "User",
  fields: { id: STRING, tags: listOf(STRING), email: STRING, alias: STRING },
};
export const CREDENTIAL: Type = {
  k: "struct",
  name: "Credential",
  fields: { id: STRING, user_id: STRING, type: STRING, credential_id: STRING, public_key: STRING },
};
export const ACTIVITY: Type = {
  k: "struct",
  name: "activity",
  fields: { type: STRING, kind: STRING, resource: STRING, action: STRING, params: PARAMS },
};
export const TIME: Type = { k: "struct", name: "time", fields: { now: TIMESTAMP } };
/** docs/policy-language.md §4.3: the wallet an activity names (bound for wallet activities; governance/governance.ts). */
export const WALLET: Type = {
  k: "struct",
  name: "Wallet",
  fields: { id: STRING, imported: BOOL, exported: BOOL, label: STRING },
};
export const WALLET_ACCOUNT: Type = { k: "struct", name: "WalletAccount", fields: { address: STRING } };
export const PRIVATE_KEY: Type = {
  k: "struct",
  name: "PrivateKey",
  fields: { id: STRING, tags: listOf(STRING), imported: BOOL, exported: BOOL, label: STRING },
};

/**
 * Turnkey's transaction-signing keywords (docs/policy-language.md §4.1). Accepted in `condition` so that a policy set
 * written for the hosted service can be imported. `eth`, `solana` and `bitcoin` are bound by the signing
 * activities to their parsed request (docs/signing-policies.md §1); their member chains
 * type-check as dynamic values and are checked when read, so a wrong field or type is an
 * evaluation error (OUTCOME_ERROR), never an allow. `tron`, `tempo` and `secret`
 * are never bound here: reading one is an AbsentKeyword error. `private_key` and
 * `wallet_account` are bound by the activities that sign (docs/signing.md §4); `wallet` and
 * `wallets` by the wallet activities and signing with a wallet account.
 */
export const SIGNING_KEYWORDS: ReadonlySet<string> = new Set([
  "wallet",
  "wallets",
  "private_key",
  "wallet_account",
  "eth",
  "solana",
  "tron",
  "bitcoin",
  "tempo",
  "secret",
]);

/** Keyword roots each field may use. */
export const FIELD_ROOTS: Readonly<Record<Field, Readonly<Record<string, Type>>>> = {
  consensus: { approvers: listOf(USER), credentials: listOf(CREDENTIAL) },
  condition: {
    activity: ACTIVITY,
    wallet: WALLET,
    wallets: listOf(WALLET),
    private_key: PRIVATE_KEY,
    wallet_account: WALLET_ACCOUNT,
    eth: DYNAMIC,
    solana: DYNAMIC,
    tron: DYNAMIC,
    bitcoin: DYNAMIC,
    tempo: DYNAMIC,
    secret: DYNAMIC,
  },
  time: { time: TIME },
};

/** Functions exist only in the `time` field. */
export const TIME_FUNCTIONS: ReadonlySet<string> = new Set(["Timestamp", "CronSpan"]);

export const ALL_ROOTS: ReadonlySet<string> = new Set(Object.values(FIELD_ROOTS).flatMap((roots) => Object.keys(roots)));

export const isNumeric = (t: Type): boolean => t.k === "int" || t.k === "uint";

/** Values that `==`, `in` and `contains` can compare, grouped so int and uint mix. */
export type EqClass = "bool" | "numeric" | "string" | "timestamp";
export function eqClass(t: Type): EqClass | null {
  switch (t.k) {
    case "bool":
    case "string":
    case "timestamp":
      return t.k;
    case "int":
    case "uint":
      return "numeric";
    default:
      return null;
  }
}

export function typeName(t: Type): string {
  switch (t.k) {
    case "list":
      return t.elem ? `list<${typeName(t.elem)}>` : "list";
    case "struct":
      return t.name;
    case "params":
      return "activity.params";
    case "dynamic":
      return "a value of activity.params";
    default:
      return t.k;
  }
}
