// The inputs of one evaluation. Plain data, so the policy engine can build
// them straight from its rows without wrapping.

export interface UserFacts {
  id: string;
  tags: readonly string[];
  email: string;
  alias: string;
}

export interface CredentialFacts {
  id: string;
  user_id: string;
  type: string;
  credential_id: string;
  public_key: string;
}

/** What `activity.params.<name>` may hold: strings, ints (always bigint), bools and lists of those. */
export type ParamValue = string | bigint | boolean | readonly ParamValue[];

/** A wallet as the condition keywords `wallet` and `wallets` see it. */
export interface WalletFacts {
  id: string;
  imported: boolean;
  exported: boolean;
  /** The wallet's name. */
  label: string;
}

/** The private key a signing activity names, as the condition keyword `private_key` sees it. */
export interface PrivateKeyFacts {
  id: string;
  /** Private key tag ids. */
  tags: readonly string[];
  imported: boolean;
  exported: boolean;
  /** The key's name. */
  label: string;
}

/** The wallet account a signing activity names (`wallet_account`). */
export interface WalletAccountFacts {
  address: string;
}

/** What a signing activity's key binds (docs/signing.md §4). */
export interface SignerFacts {
  wallets?: readonly WalletFacts[];
  walletAccount?: WalletAccountFacts;
  privateKey?: PrivateKeyFacts;
}

export interface ActivityFacts {
  type: string;
  kind: string;
  resource: string;
  action: string;
  /** Only the params this activity type exposes; anything else is a MissingField error. */
  params: Readonly<Record<string, ParamValue>>;
  /**
   * The wallets the activity names (not part of the `activity` keyword: read by `wallets`),
   * in request order; absent when it names none. `wallet` is the one wallet named; with
   * several, decide() judges a policy reading `wallet` once per wallet (engine.ts). Absent
   * keywords are an evaluation error (OUTCOME_ERROR), never a value.
   */
  wallets?: readonly WalletFacts[];
  /** `wallet_account`: bound by signing with a wallet account (docs/signing.md §4). */
  walletAccount?: WalletAccountFacts;
  /** `private_key`: bound by signing with a private key (docs/signing.md §4). */
  privateKey?: PrivateKeyFacts;
  /**
   * The parsed transaction or payload a signing activity carries (docs/signing-policies.md §1):
   * `eth` → {tx | eip_712}, `solana` → {tx}. Plain data: objects read by own property only,
   * ints as bigint, lists as arrays. A keyword root or member the request does not have is an
   * evaluation error (OUTCOME_ERROR), never a value.
   */
  signing?: SigningFacts;
}

/** A value inside the signing facts: read through dynamic member access (compiler.ts). */
export type SigningValue = string | bigint | boolean | readonly SigningValue[] | { readonly [field: string]: SigningValue | undefined };

/** The signing keyword roots an activity binds. */
export interface SigningFacts {
  readonly eth?: { readonly [field: string]: SigningValue | undefined };
  readonly solana?: { readonly [field: string]: SigningValue | undefined };
  readonly bitcoin?: { readonly [field: string]: SigningValue | undefined };
}

/** A field reads only its own keywords; the others may be left out. */
export interface EvalEnv {
  activity?: ActivityFacts;
  approvers?: readonly UserFacts[];
  credentials?: readonly CredentialFacts[];
  /** `time.now`, in Unix milliseconds (trusted server time). */
  nowMs?: number;
  /**
   * What `wallet` reads in this pass. Unset: the activity's one named wallet (absent when it
   * names none or several). decide() sets it to each of several named wallets in turn.
   */
  wallet?: WalletFacts;
}

const KIND_VERSION_SUFFIX = /_V\d+$/;

/** `ACTIVITY_TYPE_CREATE_USERS_V4` → `CREATE_USERS`: drop the prefix and a trailing `_V<digits>`. */
export function activityKind(type: string): string {
  const bare = type.startsWith("ACTIVITY_TYPE_") ? type.slice("ACTIVITY_TYPE_".length) : type;
  return bare.replace(KIND_VERSION_SUFFIX, "");
}
