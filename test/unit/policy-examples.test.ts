// docs/policy-language.md §8, example rows 1–50: each row's policy compiled with compilePolicy,
// evaluated with evaluatePolicy on the activities its "Meaning / expected" column names,
// and decided with decide() as the only policy of an org whose root quorum is not involved.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { PolicyCompileError, type CredentialFacts, type ParamValue, type UserFacts } from "../../src/policy/index.ts";
import type { WalletFacts } from "../../src/policy/facts.ts";
import { compilePolicy, decide, evaluatePolicy, policySet, type CompiledPolicy, type Outcome } from "../../src/policy/engine.ts";
import { act, apiKey, passkey, policy, user, ms } from "../helpers/policy-facts.ts";

// ------------------------------------------------------------ placeholders

const BIND: Record<string, string> = {
  USER_ID: "5a0c9e43-1f0b-4c8e-9a51-0d4a3b6f7e01",
  USER_TAG_ID: "c6b7e0d2-8d0f-4c55-a2c1-7f1e4a9b0a01",
  TAG_A: "c6b7e0d2-8d0f-4c55-a2c1-7f1e4a9b0a02",
  TAG_B: "c6b7e0d2-8d0f-4c55-a2c1-7f1e4a9b0a03",
  SECURITY_TAG_ID: "c6b7e0d2-8d0f-4c55-a2c1-7f1e4a9b0a04",
  OPS_TAG_ID: "c6b7e0d2-8d0f-4c55-a2c1-7f1e4a9b0a05",
  OPS_TEAM_TAG_ID: "c6b7e0d2-8d0f-4c55-a2c1-7f1e4a9b0a06",
  YOUR_API_USER_ID: "5a0c9e43-1f0b-4c8e-9a51-0d4a3b6f7e02",
  YOUR_CREDENTIAL_PUBLIC_KEY: "02a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90",
  AGENT_ID: "5a0c9e43-1f0b-4c8e-9a51-0d4a3b6f7e03",
  HUMAN_ID: "5a0c9e43-1f0b-4c8e-9a51-0d4a3b6f7e04",
  ADMIN_ID: "5a0c9e43-1f0b-4c8e-9a51-0d4a3b6f7e05",
  SERVICE_USER_ID: "5a0c9e43-1f0b-4c8e-9a51-0d4a3b6f7e06",
  WALLET_ID: "9d4f2b10-2222-4a6b-8c3d-000000000001",
  PRIVATE_KEY_ID: "9d4f2b10-2222-4a6b-8c3d-000000000002",
  ENDPOINT_ID: "7e3a5c21-3333-4b7c-9d4e-000000000001",
};

/** Replaces every `<NAME>` with its binding; an unbound placeholder is a test bug. */
function bind(src: string): string {
  return src.replace(/<([A-Z_]+)>/g, (_, name: string) => {
    const v = BIND[name];
    assert.ok(v, `test bug: unbound placeholder <${name}>`);
    return v;
  });
}

// ------------------------------------------------------------ people

const OTHER_ID = "5a0c9e43-1f0b-4c8e-9a51-0d4a3b6f7eff";
const ROOT_ID = "5a0c9e43-1f0b-4c8e-9a51-0d4a3b6f7e00";
const OTHER_ENDPOINT = "7e3a5c21-3333-4b7c-9d4e-000000000002";
const PROFILE = "11111111-1111-1111-1111-111111111111";
const LITERAL_UUID = "4b894565-fa11-42fc-b813-5bf4ea3d53f9";

const U = {
  user: user(BIND.USER_ID!),
  other: user(OTHER_ID),
  tagged1: user("5a0c9e43-0000-4000-8000-00000000a001", [BIND.USER_TAG_ID!]),
  tagged2: user("5a0c9e43-0000-4000-8000-00000000a002", ["unrelated-tag", BIND.USER_TAG_ID!]),
  a1: user("5a0c9e43-0000-4000-8000-00000000b001", [BIND.TAG_A!]),
  a2: user("5a0c9e43-0000-4000-8000-00000000b002", [BIND.TAG_A!]),
  b1: user("5a0c9e43-0000-4000-8000-00000000b003", [BIND.TAG_B!]),
  b2: user("5a0c9e43-0000-4000-8000-00000000b004", [BIND.TAG_B!]),
  ab: user("5a0c9e43-0000-4000-8000-00000000b005", [BIND.TAG_A!, BIND.TAG_B!]),
  sec: user("5a0c9e43-0000-4000-8000-00000000c001", [BIND.SECURITY_TAG_ID!]),
  ops1: user("5a0c9e43-0000-4000-8000-00000000c002", [BIND.OPS_TAG_ID!]),
  ops2: user("5a0c9e43-0000-4000-8000-00000000c003", [BIND.OPS_TAG_ID!]),
  secOps: user("5a0c9e43-0000-4000-8000-00000000c004", [BIND.OPS_TAG_ID!, BIND.SECURITY_TAG_ID!]),
  apiUser: user(BIND.YOUR_API_USER_ID!),
  agent: user(BIND.AGENT_ID!),
  human: user(BIND.HUMAN_ID!),
  admin: user(BIND.ADMIN_ID!),
  service: user(BIND.SERVICE_USER_ID!),
  browser: user("5a0c9e43-0000-4000-8000-00000000d001", ["browser-agent"]),
  payment: user("5a0c9e43-0000-4000-8000-00000000d002", ["payment-agent"]),
  browserPayment: user("5a0c9e43-0000-4000-8000-00000000d003", ["browser-agent", "payment-agent"]),
  rec1: user("5a0c9e43-0000-4000-8000-00000000e001", ["recovery-operator"]),
  rec2: user("5a0c9e43-0000-4000-8000-00000000e002", ["recovery-operator"]),
  team1: user("5a0c9e43-0000-4000-8000-00000000f001", [BIND.OPS_TEAM_TAG_ID!]),
  team2: user("5a0c9e43-0000-4000-8000-00000000f002", [BIND.OPS_TEAM_TAG_ID!]),
  team3: user("5a0c9e43-0000-4000-8000-00000000f003", [BIND.OPS_TEAM_TAG_ID!]),
  literal: user(LITERAL_UUID),
  opsMail: user("5a0c9e43-0000-4000-8000-00000000f101", [], "ops@example.com", "ops"),
  devMail: user("5a0c9e43-0000-4000-8000-00000000f102", [], "dev@example.com", "dev"),
  noMail: user("5a0c9e43-0000-4000-8000-00000000f103"),
} satisfies Record<string, UserFacts>;

// ------------------------------------------------------------ cases

/** Mon 2 Mar 2026 10:00 EST: in March 2026, inside NY business hours, outside 02:00–03:00 UTC. */
const DEFAULT_NOW = "2026-03-02T15:00:00Z";

const WALLET_W: WalletFacts = { id: BIND.WALLET_ID!, imported: false, exported: false, label: "treasury" };
const WALLET_OTHER: WalletFacts = { id: "9d4f2b10-2222-4a6b-8c3d-0000000000ff", imported: false, exported: false, label: "other" };

interface Case {
  what: string;
  /** Activity type without `ACTIVITY_TYPE_`. */
  type: string;
  params?: Record<string, ParamValue>;
  /** Approvers in order of first approval; the first is the submitter. */
  by: readonly UserFacts[];
  /** Defaults to one P-256 API key per approver. */
  creds?: readonly CredentialFacts[];
  at?: string;
  expect: Outcome;
  /** Substring of the runtime error behind OUTCOME_ERROR. */
  error?: string;
  /** The wallets the activity names (what `wallet` / `wallets` are bound to). */
  wallets?: readonly WalletFacts[];
}

interface Row {
  n: number;
  effect: "ALLOW" | "DENY";
  consensus: string;
  condition: string;
  time?: string;
  cases?: readonly Case[];
  /** Creation-time rejection (project decision for signing keywords): substring of the message. */
  rejects?: string;
  /** Row-specific final-outcome checks beyond the single-policy default. */
  extra?: (p: CompiledPolicy) => void;
}

const c = (what: string, type: string, by: readonly UserFacts[], expect: Outcome, more: Partial<Case> = {}): Case => ({
  what,
  type,
  by,
  expect,
  ...more,
});

const ALLOW: Outcome = "OUTCOME_ALLOW";
const RC: Outcome = "OUTCOME_REQUIRES_CONSENSUS";
const DENY_EXPLICIT: Outcome = "OUTCOME_DENY_EXPLICIT";
const NOT_APPLICABLE: Outcome = "OUTCOME_DENY_IMPLICIT";
const ERROR: Outcome = "OUTCOME_ERROR";
const TIME_INACTIVE: Outcome = "OUTCOME_TIME_INACTIVE";

const ALL_CREATE_USERS = ["CREATE_USERS", "CREATE_USERS_V2", "CREATE_USERS_V3", "CREATE_USERS_V4", "CREATE_API_ONLY_USERS"];
const SUB_ORG_VERSIONS = ["CREATE_SUB_ORGANIZATION", ...[2, 3, 4, 5, 6, 7, 8].map((v) => `CREATE_SUB_ORGANIZATION_V${v}`)];
const AUTH_CREATE = [
  "STAMP_LOGIN",
  "OTP_LOGIN_V2",
  "OAUTH_LOGIN",
  "OAUTH2_AUTHENTICATE",
  "CREATE_OAUTH2_CREDENTIAL",
  "INIT_OTP_AUTH_V3",
  "CREATE_READ_WRITE_SESSION_V2",
  "EMAIL_AUTH_V3",
  "OTP_AUTH",
  "OAUTH",
];

function finalFor(o: Outcome): Outcome {
  if (o === ALLOW || o === RC || o === DENY_EXPLICIT) return o;
  return NOT_APPLICABLE; // not applicable, error and time-inactive all leave nothing to decide
}

/** decide() with `policies` as the org's only policies; a root quorum of one uninvolved root user. */
/** The activity facts of a case, with the wallets it names. */
const activityOf = (k: Pick<Case, "type" | "params" | "wallets">) => ({
  ...act(k.type, k.params),
  ...(k.wallets ? { wallets: k.wallets } : {}),
});

function decideWith(
  policies: readonly CompiledPolicy[],
  k: Pick<Case, "type" | "params" | "by" | "creds" | "at" | "wallets">,
  over: { rootIds?: string[]; threshold?: number; implicitlyAllowed?: boolean } = {},
) {
  return decide(policySet(policies), {
    activity: activityOf(k),
    rootOnly: false,
    quorum: { userIds: new Set(over.rootIds ?? [ROOT_ID]), threshold: over.threshold ?? 1 },
    approvers: k.by,
    credentials: k.creds ?? k.by.map((u) => apiKey(u)),
    rejection: false,
    implicitlyAllowed: over.implicitlyAllowed ?? false,
    nowMs: ms(k.at ?? DEFAULT_NOW),
  });
}

const ALLOW_ALL = (): CompiledPolicy => policy("ALLOW", "", "true", "", "allow-all");

// ------------------------------------------------------------ the table

const ROWS: readonly Row[] = [
  {
    n: 1,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<USER_ID>')",
    condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
    cases: [
      c("USER_ID submits CREATE_WALLET", "CREATE_WALLET", [U.user], ALLOW),
      c("someone else submits CREATE_WALLET", "CREATE_WALLET", [U.other], RC),
      c("someone else submits, then USER_ID approves", "CREATE_WALLET", [U.other, U.user], ALLOW),
      c("CREATE_USERS_V4 by USER_ID", "CREATE_USERS_V4", [U.user], NOT_APPLICABLE),
    ],
  },
  {
    n: 2,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.tags.contains('<USER_TAG_ID>'))",
    condition: "activity.resource == 'USER' && activity.action == 'CREATE'",
    cases: [
      ...ALL_CREATE_USERS.map((t) => c(`tagged approver, ${t}`, t, [U.tagged1], ALLOW)),
      c("tag among several tags", "CREATE_USERS_V4", [U.tagged2], ALLOW),
      c("untagged submitter", "CREATE_USERS_V4", [U.other], RC),
      c("untagged submitter, tagged approver", "CREATE_API_ONLY_USERS", [U.other, U.tagged1], ALLOW),
      c("DELETE_USERS is not USER/CREATE", "DELETE_USERS", [U.tagged1], NOT_APPLICABLE, { params: { user_ids: [OTHER_ID] } }),
    ],
  },
  {
    n: 3,
    effect: "ALLOW",
    consensus: "approvers.filter(user, user.tags.contains('<USER_TAG_ID>')).count() >= 2",
    condition: "activity.resource == 'POLICY' && activity.action == 'CREATE'",
    cases: [
      c("one tagged approver, CREATE_POLICY_V3", "CREATE_POLICY_V3", [U.tagged1], RC),
      c("one tagged approver, CREATE_POLICIES", "CREATE_POLICIES", [U.tagged1], RC),
      c("two tagged approvers, CREATE_POLICY_V3", "CREATE_POLICY_V3", [U.tagged1, U.tagged2], ALLOW),
      c("two tagged approvers, CREATE_POLICIES", "CREATE_POLICIES", [U.tagged2, U.tagged1], ALLOW),
      c("tagged submitter plus untagged approver", "CREATE_POLICY_V3", [U.tagged1, U.other], RC),
      c("UPDATE_POLICY_V2 is not POLICY/CREATE", "UPDATE_POLICY_V2", [U.tagged1, U.tagged2], NOT_APPLICABLE),
    ],
  },
  {
    n: 4,
    effect: "ALLOW",
    consensus: "approvers.filter(user, user.tags.contains('<TAG_A>') || user.tags.contains('<TAG_B>')).count() >= 2",
    condition: "activity.resource == 'POLICY' && activity.action == 'CREATE'",
    cases: [
      c("A + B", "CREATE_POLICY_V3", [U.a1, U.b1], ALLOW),
      c("A + A", "CREATE_POLICY_V3", [U.a1, U.a2], ALLOW),
      c("B + B", "CREATE_POLICIES", [U.b1, U.b2], ALLOW),
      c("A alone", "CREATE_POLICY_V3", [U.a1], RC),
      c("one user with both tags counts once", "CREATE_POLICY_V3", [U.ab], RC),
      c("A + untagged", "CREATE_POLICY_V3", [U.a1, U.other], RC),
    ],
  },
  {
    n: 5,
    effect: "ALLOW",
    consensus:
      "approvers.any(user, user.tags.contains('<SECURITY_TAG_ID>') || user.tags.contains('<OPS_TAG_ID>')) && (approvers.filter(user, user.tags.contains('<SECURITY_TAG_ID>')).count() >= 1 && approvers.filter(user, user.tags.contains('<OPS_TAG_ID>')).count() >= 2)",
    condition:
      "activity.resource == 'POLICY' && (activity.action == 'CREATE' || activity.action == 'UPDATE' || activity.action == 'DELETE')",
    cases: [
      ...["CREATE_POLICY_V3", "CREATE_POLICIES", "UPDATE_POLICY_V2", "DELETE_POLICY", "DELETE_POLICIES"].map((t) =>
        c(`1 security + 2 ops, ${t}`, t, [U.sec, U.ops1, U.ops2], ALLOW),
      ),
      c("a user with both tags counts for both", "UPDATE_POLICY_V2", [U.secOps, U.ops1], ALLOW),
      c("1 security + 1 ops", "CREATE_POLICY_V3", [U.sec, U.ops1], RC),
      c("2 ops, no security", "CREATE_POLICY_V3", [U.ops1, U.ops2], RC),
      c("the double-tagged user alone", "DELETE_POLICIES", [U.secOps], RC),
      c("CREATE_USERS_V4 is not a POLICY activity", "CREATE_USERS_V4", [U.sec, U.ops1, U.ops2], NOT_APPLICABLE),
    ],
  },
  {
    n: 6,
    effect: "DENY",
    consensus: "approvers.any(user, user.tags.contains('<USER_TAG_ID>'))",
    condition: "activity.action == 'DELETE'",
    cases: [
      c("tagged submitter, DELETE_POLICIES", "DELETE_POLICIES", [U.tagged1], DENY_EXPLICIT),
      c("tagged submitter, DELETE_USERS", "DELETE_USERS", [U.tagged1], DENY_EXPLICIT, { params: { user_ids: [OTHER_ID] } }),
      c("untagged submitter: not triggered", "DELETE_USERS", [U.other], NOT_APPLICABLE, { params: { user_ids: [OTHER_ID] } }),
      c("untagged submitter, tagged approver joins: triggered", "DELETE_API_KEYS", [U.other, U.tagged2], DENY_EXPLICIT, {
        params: { user_id: OTHER_ID, api_key_ids: ["k1"] },
      }),
      c("tagged submitter, non-DELETE activity", "CREATE_POLICY_V3", [U.tagged1], NOT_APPLICABLE),
    ],
    extra: (p) => {
      // Deny beats allow (docs/policy-language.md §6.4, step 4 before step 5).
      const d = decideWith([ALLOW_ALL(), p], { type: "DELETE_POLICIES", by: [U.tagged1] });
      assert.equal(d.outcome, DENY_EXPLICIT);
      // Not triggered: the allow-all policy decides.
      assert.equal(decideWith([ALLOW_ALL(), p], { type: "DELETE_POLICIES", by: [U.other] }).outcome, ALLOW);
    },
  },
  {
    n: 7,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.resource == 'ORGANIZATION' && activity.action == 'CREATE'",
    cases: [
      ...SUB_ORG_VERSIONS.map((t) => c(`API user, ${t}`, t, [U.apiUser], ALLOW)),
      c("another user", "CREATE_SUB_ORGANIZATION_V8", [U.other], RC),
      c("DELETE_SUB_ORGANIZATION", "DELETE_SUB_ORGANIZATION", [U.apiUser], NOT_APPLICABLE),
    ],
  },
  {
    n: 8,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.resource == 'AUTH' && activity.action == 'CREATE'",
    cases: [
      ...AUTH_CREATE.map((t) => c(`API user, ${t}`, t, [U.apiUser], ALLOW)),
      c("INIT_OTP_V3 (resource OTP)", "INIT_OTP_V3", [U.apiUser], NOT_APPLICABLE),
      c("VERIFY_OTP_V2 (OTP / VERIFY)", "VERIFY_OTP_V2", [U.apiUser], NOT_APPLICABLE),
      c("UPDATE_OAUTH2_CREDENTIAL (AUTH / UPDATE)", "UPDATE_OAUTH2_CREDENTIAL", [U.apiUser], NOT_APPLICABLE),
      c("another user, STAMP_LOGIN", "STAMP_LOGIN", [U.other], RC),
    ],
  },
  {
    n: 9,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.resource in ['AUTH', 'OTP'] && activity.action in ['CREATE','VERIFY']",
    cases: [
      ...[...AUTH_CREATE, "INIT_OTP_V3", "VERIFY_OTP_V2"].map((t) => c(`API user, ${t}`, t, [U.apiUser], ALLOW)),
      c("UPDATE_OAUTH2_CREDENTIAL (AUTH / UPDATE)", "UPDATE_OAUTH2_CREDENTIAL", [U.apiUser], NOT_APPLICABLE),
      c("CREATE_SUB_ORGANIZATION_V8 (ORGANIZATION)", "CREATE_SUB_ORGANIZATION_V8", [U.apiUser], NOT_APPLICABLE),
    ],
  },
  {
    n: 10,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.type == 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2'",
    cases: [
      c("V2", "CREATE_READ_WRITE_SESSION_V2", [U.apiUser], ALLOW),
      c("v1: exact version only", "CREATE_READ_WRITE_SESSION", [U.apiUser], NOT_APPLICABLE),
      c("V2 by another user", "CREATE_READ_WRITE_SESSION_V2", [U.other], RC),
    ],
  },
  {
    n: 11,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.kind == 'CREATE_READ_WRITE_SESSION'",
    cases: [
      c("v1", "CREATE_READ_WRITE_SESSION", [U.apiUser], ALLOW),
      c("V2", "CREATE_READ_WRITE_SESSION_V2", [U.apiUser], ALLOW),
      c("another kind", "STAMP_LOGIN", [U.apiUser], NOT_APPLICABLE),
    ],
  },
  {
    n: 12,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.kind == 'SIGN_TRANSACTION'",
    cases: [
      c("synthetic SIGN_TRANSACTION_V2", "SIGN_TRANSACTION_V2", [U.apiUser], ALLOW),
      c("synthetic SIGN_TRANSACTION (v1)", "SIGN_TRANSACTION", [U.apiUser], ALLOW),
      c("SIGN_RAW_PAYLOAD_V2 is another kind", "SIGN_RAW_PAYLOAD_V2", [U.apiUser], NOT_APPLICABLE),
      c("CREATE_USERS_V4", "CREATE_USERS_V4", [U.apiUser], NOT_APPLICABLE),
    ],
  },
  {
    n: 13,
    effect: "ALLOW",
    consensus: "credentials.any(credential, credential.type == 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')",
    condition: "activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'",
    cases: [
      c("passkey approval", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { creds: [passkey(U.user)] }),
      c("API-key-only approval", "SIGN_TRANSACTION_V2", [U.user], RC, { creds: [apiKey(U.user)] }),
      c("API key, then a passkey approval", "SIGN_TRANSACTION_V2", [U.user, U.other], ALLOW, { creds: [apiKey(U.user), passkey(U.other)] }),
      c("two API keys", "SIGN_TRANSACTION_V2", [U.user, U.other], RC),
      c("other type", "CREATE_USERS_V4", [U.user], NOT_APPLICABLE, { creds: [passkey(U.user)] }),
    ],
  },
  {
    n: 14,
    effect: "ALLOW",
    consensus: "credentials.any(credential, credential.public_key == '<YOUR_CREDENTIAL_PUBLIC_KEY>')",
    condition: "activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'",
    cases: [
      c("that key", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { creds: [apiKey(U.user, BIND.YOUR_CREDENTIAL_PUBLIC_KEY)] }),
      c("that key as a second approval", "SIGN_TRANSACTION_V2", [U.other, U.user], ALLOW, {
        creds: [apiKey(U.other), passkey(U.user, BIND.YOUR_CREDENTIAL_PUBLIC_KEY)],
      }),
      c("same user, another key", "SIGN_TRANSACTION_V2", [U.user], RC, { creds: [apiKey(U.user)] }),
      c("other type", "SIGN_TRANSACTION", [U.user], NOT_APPLICABLE, { creds: [apiKey(U.user, BIND.YOUR_CREDENTIAL_PUBLIC_KEY)] }),
    ],
  },
  {
    n: 15,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<USER_ID>')",
    condition:
      "activity.type == 'ACTIVITY_TYPE_DELETE_USERS' && activity.params.user_ids.count() == 1 && '<USER_ID>' in activity.params.user_ids",
    cases: [
      c("user_ids = [USER_ID]", "DELETE_USERS", [U.user], ALLOW, { params: { user_ids: [BIND.USER_ID!] } }),
      c("user_ids = [USER_ID, OTHER]", "DELETE_USERS", [U.user], NOT_APPLICABLE, { params: { user_ids: [BIND.USER_ID!, OTHER_ID] } }),
      c("user_ids = [OTHER]", "DELETE_USERS", [U.user], NOT_APPLICABLE, { params: { user_ids: [OTHER_ID] } }),
      c("[USER_ID] submitted by someone else", "DELETE_USERS", [U.other], RC, { params: { user_ids: [BIND.USER_ID!] } }),
      c("CREATE_USERS_V4: MissingField", "CREATE_USERS_V4", [U.user], ERROR, { error: "user_ids" }),
      c("DELETE_API_KEYS (other params): MissingField", "DELETE_API_KEYS", [U.user], ERROR, {
        params: { user_id: BIND.USER_ID!, api_key_ids: ["k"] },
        error: "user_ids",
      }),
    ],
    extra: (p) => {
      // The error neither allows nor denies: an allow-all policy still decides.
      assert.equal(decideWith([p, ALLOW_ALL()], { type: "CREATE_USERS_V4", by: [U.user] }).outcome, ALLOW);
    },
  },
  {
    n: 16,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition:
      "(activity.resource == 'AUTH' && activity.action == 'CREATE') || (activity.resource == 'ORGANIZATION' && activity.action == 'CREATE')",
    cases: [
      ...["STAMP_LOGIN", "OTP_LOGIN_V2", "EMAIL_AUTH_V3", "OAUTH_LOGIN", "CREATE_SUB_ORGANIZATION_V8"].map((t) =>
        c(`API user, ${t}`, t, [U.apiUser], ALLOW),
      ),
      ...["INIT_OTP_V3", "VERIFY_OTP_V2", "DELETE_SUB_ORGANIZATION", "CREATE_USERS_V4"].map((t) => c(t, t, [U.apiUser], NOT_APPLICABLE)),
      c("another user signs up", "CREATE_SUB_ORGANIZATION_V8", [U.other], RC),
    ],
  },
  {
    n: 17,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition:
      "(activity.resource == 'AUTH' && activity.action == 'CREATE') || (activity.resource == 'OTP' && activity.action == 'CREATE') || (activity.resource == 'OTP' && activity.action == 'VERIFY') || (activity.resource == 'ORGANIZATION' && activity.action == 'CREATE')",
    cases: [
      ...["INIT_OTP_V3", "VERIFY_OTP_V2", "OTP_LOGIN_V2", "INIT_OTP_AUTH_V3", "OAUTH_LOGIN", "CREATE_SUB_ORGANIZATION_V8"].map((t) =>
        c(`API user, ${t}`, t, [U.apiUser], ALLOW),
      ),
      ...["DELETE_SUB_ORGANIZATION", "UPDATE_OAUTH2_CREDENTIAL", "CREATE_USERS_V4"].map((t) => c(t, t, [U.apiUser], NOT_APPLICABLE)),
    ],
  },
  {
    n: 18,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.kind in ['INIT_OTP', 'VERIFY_OTP', 'OTP_LOGIN', 'CREATE_SUB_ORGANIZATION']",
    cases: [
      ...[
        "INIT_OTP_V3",
        "INIT_OTP_V2",
        "VERIFY_OTP_V2",
        "OTP_LOGIN_V2",
        "OTP_LOGIN",
        "CREATE_SUB_ORGANIZATION_V8",
        "CREATE_SUB_ORGANIZATION",
      ].map((t) => c(`API user, ${t}`, t, [U.apiUser], ALLOW)),
      c("OAUTH_LOGIN", "OAUTH_LOGIN", [U.apiUser], NOT_APPLICABLE),
      c("INIT_OTP_AUTH_V3 (kind INIT_OTP_AUTH, not INIT_OTP)", "INIT_OTP_AUTH_V3", [U.apiUser], NOT_APPLICABLE),
    ],
  },
  {
    n: 19,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.type == 'ACTIVITY_TYPE_INIT_OTP_V2'",
    cases: [
      c("INIT_OTP_V2", "INIT_OTP_V2", [U.apiUser], ALLOW),
      c("INIT_OTP_V3: the migration pitfall", "INIT_OTP_V3", [U.apiUser], NOT_APPLICABLE),
    ],
  },
  {
    n: 20,
    effect: "ALLOW",
    consensus: "approvers.count() >= 2",
    condition: "activity.type == 'ACTIVITY_TYPE_CREATE_POLICY_V3'",
    cases: [
      c("submitter only", "CREATE_POLICY_V3", [U.user], RC),
      c("submitter + one approval", "CREATE_POLICY_V3", [U.user, U.other], ALLOW),
      c("CREATE_POLICIES", "CREATE_POLICIES", [U.user, U.other], NOT_APPLICABLE),
    ],
  },
  {
    n: 21,
    effect: "ALLOW",
    consensus: "approvers.count() >= 2",
    condition: "activity.resource == 'MFA_POLICY' && activity.action == 'DELETE'",
    cases: [
      c("one approver", "DELETE_MFA_POLICY", [U.user], RC),
      c("two approvers", "DELETE_MFA_POLICY", [U.user, U.other], ALLOW),
      c("CREATE_MFA_POLICY", "CREATE_MFA_POLICY", [U.user, U.other], NOT_APPLICABLE),
    ],
  },
  {
    n: 22,
    effect: "ALLOW",
    consensus: "",
    condition: "activity.resource == 'MFA_POLICY' && activity.action == 'CREATE'",
    cases: [
      c("any user", "CREATE_MFA_POLICY", [U.other], ALLOW),
      c("another user", "CREATE_MFA_POLICY", [U.noMail], ALLOW),
      c("DELETE_MFA_POLICY", "DELETE_MFA_POLICY", [U.other], NOT_APPLICABLE),
      c("UPDATE_MFA_POLICY", "UPDATE_MFA_POLICY", [U.other], NOT_APPLICABLE),
    ],
    extra: (p) => assert.equal(p.consensus, null, "an absent consensus compiles to nothing"),
  },
  {
    n: 23,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<AGENT_ID>') && approvers.any(user, user.id == '<HUMAN_ID>')",
    condition: "activity.action == 'SIGN'",
    cases: [
      c("agent alone", "SIGN_TRANSACTION_V2", [U.agent], RC),
      c("agent then human", "SIGN_TRANSACTION_V2", [U.agent, U.human], ALLOW),
      c("human alone", "SIGN_RAW_PAYLOAD_V2", [U.human], RC),
      c("agent + someone else", "SIGN_TRANSACTION_V2", [U.agent, U.other], RC),
      c("non-SIGN activity", "CREATE_USERS_V4", [U.agent, U.human], NOT_APPLICABLE),
    ],
  },
  {
    n: 24,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<AGENT_ID>')",
    condition:
      "activity.type == 'ACTIVITY_TYPE_DELETE_USERS' && activity.params.user_ids.count() == 1 && '<AGENT_ID>' in activity.params.user_ids",
    cases: [
      c("user_ids = [AGENT]", "DELETE_USERS", [U.agent], ALLOW, { params: { user_ids: [BIND.AGENT_ID!] } }),
      c("user_ids = [AGENT, OTHER]", "DELETE_USERS", [U.agent], NOT_APPLICABLE, { params: { user_ids: [BIND.AGENT_ID!, OTHER_ID] } }),
      c("user_ids = [OTHER]", "DELETE_USERS", [U.agent], NOT_APPLICABLE, { params: { user_ids: [OTHER_ID] } }),
      c("[AGENT] submitted by someone else", "DELETE_USERS", [U.human], RC, { params: { user_ids: [BIND.AGENT_ID!] } }),
      c("CREATE_API_KEYS_V2: MissingField", "CREATE_API_KEYS_V2", [U.agent], ERROR, {
        params: { user_id: BIND.AGENT_ID! },
        error: "user_ids",
      }),
    ],
  },
  {
    n: 25,
    effect: "ALLOW",
    consensus: "approvers.any(u, u.tags.contains('browser-agent')) && approvers.any(u, u.tags.contains('payment-agent'))",
    condition: "",
    cases: [
      c("both roles, CREATE_USERS_V4", "CREATE_USERS_V4", [U.browser, U.payment], ALLOW),
      c("both roles, DELETE_POLICIES", "DELETE_POLICIES", [U.payment, U.browser], ALLOW),
      c("browser agent alone", "CREATE_USERS_V4", [U.browser], RC),
      c("payment agent alone", "SIGN_TRANSACTION_V2", [U.payment], RC),
      c("browser agent + untagged", "CREATE_USERS_V4", [U.browser, U.other], RC),
      // The expression checks roles, not people: one user holding both tags satisfies it.
      c("one user holding both roles", "CREATE_USERS_V4", [U.browserPayment], ALLOW),
    ],
  },
  {
    n: 26,
    effect: "ALLOW",
    consensus: "approvers.filter(u, u.tags.contains('recovery-operator')).count() >= 2",
    condition: "",
    cases: [
      c("two operators", "RECOVER_USER", [U.rec1, U.rec2], ALLOW),
      c("one operator", "RECOVER_USER", [U.rec1], RC),
      c("one operator + untagged", "CREATE_USERS_V4", [U.rec1, U.other], RC),
    ],
  },
  {
    n: 27,
    effect: "ALLOW",
    consensus: "approvers.filter(user, user.tags.contains('<OPS_TEAM_TAG_ID>')).count() > 1",
    condition: "",
    cases: [
      c("one ops approver", "CREATE_USERS_V4", [U.team1], RC),
      c("two ops approvers", "CREATE_USERS_V4", [U.team1, U.team2], ALLOW),
      c("three ops approvers", "DELETE_POLICIES", [U.team1, U.team2, U.team3], ALLOW),
      c("one ops + untagged", "CREATE_USERS_V4", [U.team1, U.other], RC),
    ],
  },
  {
    n: 28,
    effect: "ALLOW",
    consensus: "approvers.count() == 1",
    condition: "",
    cases: [
      c("lone submitter", "CREATE_USERS_V4", [U.user], ALLOW),
      c("lone submitter, any activity", "DELETE_POLICIES", [U.other], ALLOW),
      c("two approvers", "CREATE_USERS_V4", [U.user, U.other], RC),
    ],
    extra: (p) => {
      assert.ok(p.consensus);
      assert.equal(p.consensus.evaluate({ approvers: [U.user] }), true);
      assert.equal(p.consensus.evaluate({ approvers: [U.user, U.other] }), false);
      assert.equal(p.consensus.evaluate({ approvers: [] }), false);
    },
  },
  {
    n: 29,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '4b894565-fa11-42fc-b813-5bf4ea3d53f9')",
    condition: "",
    cases: [
      c("that user, CREATE_USERS_V4", "CREATE_USERS_V4", [U.literal], ALLOW),
      c("that user, DELETE_POLICIES", "DELETE_POLICIES", [U.literal], ALLOW),
      c("someone else", "CREATE_USERS_V4", [U.other], RC),
      c("someone else, then that user approves", "CREATE_USERS_V4", [U.other, U.literal], ALLOW),
    ],
  },
  {
    n: 30,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<USER_ID>')",
    condition: "activity.kind == 'SIGN_TRANSACTION'",
    time: "time.now >= Timestamp('2026-03-01T00:00:00Z') && time.now < Timestamp('2026-04-01T00:00:00Z')",
    cases: [
      c("start of March (inclusive)", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2026-03-01T00:00:00Z" }),
      c("last second of March", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2026-03-31T23:59:59Z" }),
      c("1 April (exclusive end)", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-04-01T00:00:00Z" }),
      c("last millisecond of February", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-02-28T23:59:59.999Z" }),
      c("in March, someone else", "SIGN_TRANSACTION_V2", [U.other], RC, { at: "2026-03-15T12:00:00Z" }),
      c("in March, other kind", "CREATE_USERS_V4", [U.user], NOT_APPLICABLE, { at: "2026-03-15T12:00:00Z" }),
      c("outside March, other kind: time first", "CREATE_USERS_V4", [U.user], TIME_INACTIVE, { at: "2026-05-01T00:00:00Z" }),
    ],
  },
  {
    n: 31,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<USER_ID>')",
    condition: "activity.kind == 'SIGN_TRANSACTION'",
    time: "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')",
    cases: [
      c("Mon 09:00 EST (start inclusive)", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2026-03-02T14:00:00Z" }),
      c("Mon 08:59:59 EST", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-03-02T13:59:59Z" }),
      c("Mon 16:59:59 EST", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2026-03-02T21:59:59Z" }),
      c("Mon 17:00 EST (end exclusive)", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-03-02T22:00:00Z" }),
      c("Saturday", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-03-07T15:00:00Z" }),
      c("Mon 09:00 EDT after DST", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2026-03-09T13:00:00Z" }),
      c("Mon 08:59 EDT", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-03-09T12:59:00Z" }),
      c("in hours, someone else", "SIGN_TRANSACTION_V2", [U.other], RC, { at: "2026-03-02T14:00:00Z" }),
    ],
  },
  {
    n: 32,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<USER_ID>')",
    condition: "activity.kind == 'SIGN_TRANSACTION'",
    time: "CronSpan('0 22 * * *', '8h', 'America/New_York')",
    cases: [
      c("06:59:59 EDT, spring-forward night", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2026-03-08T10:59:59Z" }),
      c("07:00 EDT, spring-forward night", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-03-08T11:00:00Z" }),
      c("04:59:59 EST, fall-back night", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2026-11-01T09:59:59Z" }),
      c("05:00 EST, fall-back night", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-11-01T10:00:00Z" }),
      c("05:59 EST, ordinary night", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2026-03-04T10:59:00Z" }),
      c("06:00 EST, ordinary night", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-03-04T11:00:00Z" }),
      c("22:00 EST (fire instant)", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2026-03-04T03:00:00Z" }),
      c("21:59:59 EST", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-03-04T02:59:59Z" }),
    ],
  },
  {
    n: 33,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<USER_ID>')",
    condition: "activity.kind == 'SIGN_TRANSACTION'",
    time: "CronSpan('0 9 * * 1-5', '8h', 'America/New_York') && time.now < Timestamp('2026-01-01T00:00:00Z')",
    cases: [
      c("Wed 31 Dec 2025 10:00 EST", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { at: "2025-12-31T15:00:00Z" }),
      c("Thu 1 Jan 2026 10:00 EST", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2026-01-01T15:00:00Z" }),
      c("Wed 31 Dec 2025 18:00 EST", "SIGN_TRANSACTION_V2", [U.user], TIME_INACTIVE, { at: "2025-12-31T23:00:00Z" }),
    ],
  },
  {
    n: 34,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.tags.contains('<OPS_TAG_ID>'))",
    condition: "activity.kind == 'CREATE_POLICY'",
    time: "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')",
    cases: [
      c("ops, in hours, CREATE_POLICY_V3", "CREATE_POLICY_V3", [U.ops1], ALLOW, { at: "2026-03-02T15:00:00Z" }),
      c("ops, in hours, CREATE_POLICY (v1)", "CREATE_POLICY", [U.ops2], ALLOW, { at: "2026-03-02T15:00:00Z" }),
      c("ops, in hours, CREATE_POLICIES (another kind)", "CREATE_POLICIES", [U.ops1], NOT_APPLICABLE, { at: "2026-03-02T15:00:00Z" }),
      c("untagged, in hours", "CREATE_POLICY_V3", [U.other], RC, { at: "2026-03-02T15:00:00Z" }),
      c("ops, after hours", "CREATE_POLICY_V3", [U.ops1], TIME_INACTIVE, { at: "2026-03-02T23:00:00Z" }),
      c("ops, Saturday", "CREATE_POLICY_V3", [U.ops1], TIME_INACTIVE, { at: "2026-03-07T15:00:00Z" }),
    ],
  },
  {
    n: 35,
    effect: "DENY",
    consensus: "",
    condition: "activity.resource == 'POLICY'",
    time: "!CronSpan('0 9 * * 1-5', '8h', 'America/New_York')",
    cases: [
      c("within hours", "CREATE_POLICY_V3", [U.user], TIME_INACTIVE, { at: "2026-03-02T15:00:00Z" }),
      c("after hours", "CREATE_POLICY_V3", [U.user], DENY_EXPLICIT, { at: "2026-03-02T23:00:00Z" }),
      c("Saturday, DELETE_POLICIES", "DELETE_POLICIES", [U.user], DENY_EXPLICIT, { at: "2026-03-07T15:00:00Z" }),
      c("after hours, UPDATE_POLICY_V2", "UPDATE_POLICY_V2", [U.other], DENY_EXPLICIT, { at: "2026-03-02T13:59:59Z" }),
      c("after hours, non-POLICY activity", "CREATE_USERS_V4", [U.user], NOT_APPLICABLE, { at: "2026-03-02T23:00:00Z" }),
    ],
    extra: (p) => {
      const k = { type: "CREATE_POLICY_V3", by: [U.user] };
      assert.equal(decideWith([ALLOW_ALL(), p], { ...k, at: "2026-03-02T15:00:00Z" }).outcome, ALLOW);
      assert.equal(decideWith([ALLOW_ALL(), p], { ...k, at: "2026-03-02T23:00:00Z" }).outcome, DENY_EXPLICIT);
    },
  },
  {
    n: 36,
    effect: "DENY",
    consensus: "",
    condition: "activity.kind == 'DELETE_USERS'",
    time: "CronSpan('0 2 * * *', '1h', 'UTC')",
    cases: [
      c("02:00 UTC", "DELETE_USERS", [U.user], DENY_EXPLICIT, { params: { user_ids: [OTHER_ID] }, at: "2026-03-02T02:00:00Z" }),
      c("02:59:59 UTC", "DELETE_USERS", [U.user], DENY_EXPLICIT, { params: { user_ids: [OTHER_ID] }, at: "2026-03-02T02:59:59Z" }),
      c("03:00 UTC", "DELETE_USERS", [U.user], TIME_INACTIVE, { params: { user_ids: [OTHER_ID] }, at: "2026-03-02T03:00:00Z" }),
      c("01:59:59 UTC", "DELETE_USERS", [U.user], TIME_INACTIVE, { params: { user_ids: [OTHER_ID] }, at: "2026-03-02T01:59:59Z" }),
      c("in the window, another kind", "CREATE_USERS_V4", [U.user], NOT_APPLICABLE, { at: "2026-03-02T02:30:00Z" }),
    ],
    extra: (p) => {
      const k = { type: "DELETE_USERS", params: { user_ids: [OTHER_ID] }, by: [U.user] };
      assert.equal(decideWith([ALLOW_ALL(), p], { ...k, at: "2026-03-02T02:30:00Z" }).outcome, DENY_EXPLICIT);
      assert.equal(decideWith([ALLOW_ALL(), p], { ...k, at: "2026-03-02T03:30:00Z" }).outcome, ALLOW);
    },
  },
  {
    n: 37,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<USER_ID>')",
    condition: "activity.action == 'SIGN' && wallet.id == '<WALLET_ID>'",
    // Accepted (imported policy sets); `wallet` is bound only by activities that name a wallet.
    cases: [
      c("a signing activity naming the wallet (engine level)", "SIGN_TRANSACTION_V2", [U.user], ALLOW, { wallets: [WALLET_W] }),
      c("another wallet", "SIGN_TRANSACTION_V2", [U.user], NOT_APPLICABLE, { wallets: [WALLET_OTHER] }),
      c("CREATE_WALLET_ACCOUNTS of the wallet: not SIGN", "CREATE_WALLET_ACCOUNTS", [U.user], NOT_APPLICABLE, { wallets: [WALLET_W] }),
      c("no wallet named: absent, never an allow", "SIGN_TRANSACTION_V2", [U.user], ERROR, { error: "'wallet' is not available" }),
      c("CREATE_USERS_V4 (no short-circuit)", "CREATE_USERS_V4", [U.user], ERROR, { error: "wallet" }),
    ],
  },
  {
    n: 38,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<USER_ID>')",
    condition: "wallet.id == '<WALLET_ID>' || private_key.id == '<PRIVATE_KEY_ID>'",
    // private_key is never bound here (no private-key activities): no short-circuit makes
    // every evaluation an error, even where `wallet.id` matches.
    cases: [
      c("the wallet matches, private_key absent", "CREATE_WALLET_ACCOUNTS", [U.user], ERROR, {
        wallets: [WALLET_W],
        error: "'private_key' is not available",
      }),
      c("CREATE_USERS_V4", "CREATE_USERS_V4", [U.user], ERROR),
    ],
  },
  {
    n: 39,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.type == 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT'",
    cases: [
      c("API user", "CREATE_WEBHOOK_ENDPOINT", [U.apiUser], ALLOW),
      c("another user", "CREATE_WEBHOOK_ENDPOINT", [U.other], RC),
      c("UPDATE_WEBHOOK_ENDPOINT", "UPDATE_WEBHOOK_ENDPOINT", [U.apiUser], NOT_APPLICABLE, { params: { endpoint_id: BIND.ENDPOINT_ID! } }),
    ],
  },
  {
    n: 40,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.type == 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT'",
    cases: [
      c("API user", "DELETE_WEBHOOK_ENDPOINT", [U.apiUser], ALLOW, { params: { endpoint_id: OTHER_ENDPOINT } }),
      c("another user", "DELETE_WEBHOOK_ENDPOINT", [U.other], RC, { params: { endpoint_id: OTHER_ENDPOINT } }),
      c("CREATE_WEBHOOK_ENDPOINT", "CREATE_WEBHOOK_ENDPOINT", [U.apiUser], NOT_APPLICABLE),
    ],
  },
  {
    n: 41,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<YOUR_API_USER_ID>')",
    condition: "activity.type == 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT' && activity.params.endpoint_id == '<ENDPOINT_ID>'",
    cases: [
      c("that endpoint", "DELETE_WEBHOOK_ENDPOINT", [U.apiUser], ALLOW, { params: { endpoint_id: BIND.ENDPOINT_ID! } }),
      c("that endpoint, another user", "DELETE_WEBHOOK_ENDPOINT", [U.other], RC, { params: { endpoint_id: BIND.ENDPOINT_ID! } }),
      c("another endpoint", "DELETE_WEBHOOK_ENDPOINT", [U.apiUser], NOT_APPLICABLE, { params: { endpoint_id: OTHER_ENDPOINT } }),
      c("UPDATE_WEBHOOK_ENDPOINT exposes endpoint_id", "UPDATE_WEBHOOK_ENDPOINT", [U.apiUser], NOT_APPLICABLE, {
        params: { endpoint_id: BIND.ENDPOINT_ID! },
      }),
      c("CREATE_WEBHOOK_ENDPOINT: MissingField", "CREATE_WEBHOOK_ENDPOINT", [U.apiUser], ERROR, { error: "endpoint_id" }),
      c("CREATE_USERS_V4: MissingField", "CREATE_USERS_V4", [U.apiUser], ERROR, { error: "endpoint_id" }),
    ],
  },
  {
    n: 42,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<ADMIN_ID>')",
    condition:
      "activity.kind == 'DELETE_API_KEYS' && activity.params.user_id == '<SERVICE_USER_ID>' && activity.params.api_key_ids.count() <= 2",
    cases: [
      c("two keys", "DELETE_API_KEYS", [U.admin], ALLOW, { params: { user_id: BIND.SERVICE_USER_ID!, api_key_ids: ["k1", "k2"] } }),
      c("one key", "DELETE_API_KEYS", [U.admin], ALLOW, { params: { user_id: BIND.SERVICE_USER_ID!, api_key_ids: ["k1"] } }),
      c("three keys", "DELETE_API_KEYS", [U.admin], NOT_APPLICABLE, {
        params: { user_id: BIND.SERVICE_USER_ID!, api_key_ids: ["k1", "k2", "k3"] },
      }),
      c("another user's keys", "DELETE_API_KEYS", [U.admin], NOT_APPLICABLE, { params: { user_id: OTHER_ID, api_key_ids: ["k1"] } }),
      c("not the admin", "DELETE_API_KEYS", [U.other], RC, { params: { user_id: BIND.SERVICE_USER_ID!, api_key_ids: ["k1"] } }),
      c("CREATE_API_KEYS_V2 (no api_key_ids)", "CREATE_API_KEYS_V2", [U.admin], ERROR, {
        params: { user_id: BIND.SERVICE_USER_ID! },
        error: "api_key_ids",
      }),
      c("CREATE_USERS_V4", "CREATE_USERS_V4", [U.admin], ERROR, { error: "user_id" }),
    ],
  },
  {
    n: 43,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<ADMIN_ID>')",
    condition: "activity.kind == 'CREATE_API_KEYS' && activity.params.user_id == '<SERVICE_USER_ID>'",
    cases: [
      c("CREATE_API_KEYS", "CREATE_API_KEYS", [U.admin], ALLOW, { params: { user_id: BIND.SERVICE_USER_ID! } }),
      c("CREATE_API_KEYS_V2", "CREATE_API_KEYS_V2", [U.admin], ALLOW, { params: { user_id: BIND.SERVICE_USER_ID! } }),
      c("keys for another user", "CREATE_API_KEYS_V2", [U.admin], NOT_APPLICABLE, { params: { user_id: OTHER_ID } }),
      c("not the admin", "CREATE_API_KEYS_V2", [U.other], RC, { params: { user_id: BIND.SERVICE_USER_ID! } }),
      c("DELETE_API_KEYS also exposes user_id", "DELETE_API_KEYS", [U.admin], NOT_APPLICABLE, {
        params: { user_id: BIND.SERVICE_USER_ID!, api_key_ids: ["k1"] },
      }),
      c("CREATE_AUTHENTICATORS_V2: no user_id", "CREATE_AUTHENTICATORS_V2", [U.admin], ERROR, { error: "user_id" }),
      c("CREATE_USERS_V4: no user_id", "CREATE_USERS_V4", [U.admin], ERROR, { error: "user_id" }),
    ],
  },
  {
    n: 44,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<ADMIN_ID>')",
    condition: "activity.kind == 'DELETE_POLICIES' && activity.params.policy_ids.count() == 1",
    cases: [
      c("DELETE_POLICIES exposes no params", "DELETE_POLICIES", [U.admin], ERROR, { error: "policy_ids" }),
      c("DELETE_POLICY exposes no params", "DELETE_POLICY", [U.admin], ERROR, { error: "policy_ids" }),
      c("CREATE_USERS_V4", "CREATE_USERS_V4", [U.admin], ERROR, { error: "policy_ids" }),
    ],
  },
  {
    n: 45,
    effect: "ALLOW",
    consensus: "",
    condition: "activity.resource == 'AUTH' && activity.params.session_profile_id == '11111111-1111-1111-1111-111111111111'",
    cases: [
      ...["STAMP_LOGIN", "OTP_LOGIN", "OTP_LOGIN_V2", "OAUTH_LOGIN"].map((t) =>
        c(`${t} asking for the profile`, t, [U.other], ALLOW, { params: { session_profile_id: PROFILE } }),
      ),
      c("STAMP_LOGIN without a profile reads ''", "STAMP_LOGIN", [U.other], NOT_APPLICABLE),
      c("OTP_LOGIN_V2 with another profile", "OTP_LOGIN_V2", [U.other], NOT_APPLICABLE, {
        params: { session_profile_id: "22222222-2222-2222-2222-222222222222" },
      }),
      c("CREATE_OAUTH2_CREDENTIAL (AUTH, no session_profile_id)", "CREATE_OAUTH2_CREDENTIAL", [U.other], ERROR, {
        error: "session_profile_id",
      }),
      c("INIT_OTP_AUTH_V3 (AUTH, other params)", "INIT_OTP_AUTH_V3", [U.other], ERROR, { error: "session_profile_id" }),
      c("CREATE_USERS_V4 (no short-circuit)", "CREATE_USERS_V4", [U.other], ERROR, { error: "session_profile_id" }),
    ],
  },
  {
    n: 46,
    effect: "DENY",
    consensus: "",
    condition: "activity.action == 'DELETE' && activity.resource != 'POLICY'",
    cases: [
      c("DELETE_USERS", "DELETE_USERS", [U.user], DENY_EXPLICIT, { params: { user_ids: [OTHER_ID] } }),
      c("DELETE_API_KEYS", "DELETE_API_KEYS", [U.user], DENY_EXPLICIT, { params: { user_id: BIND.USER_ID!, api_key_ids: ["k1"] } }),
      c("DELETE_WEBHOOK_ENDPOINT", "DELETE_WEBHOOK_ENDPOINT", [U.other], DENY_EXPLICIT, { params: { endpoint_id: OTHER_ENDPOINT } }),
      c("DELETE_SUB_ORGANIZATION", "DELETE_SUB_ORGANIZATION", [U.other], DENY_EXPLICIT),
      c("DELETE_POLICIES is exempt", "DELETE_POLICIES", [U.user], NOT_APPLICABLE),
      c("DELETE_POLICY is exempt", "DELETE_POLICY", [U.user], NOT_APPLICABLE),
      c("CREATE_USERS_V4", "CREATE_USERS_V4", [U.user], NOT_APPLICABLE),
    ],
    extra: (p) => {
      const k = { type: "DELETE_USERS", params: { user_ids: [OTHER_ID] } };
      const R1 = user("root-1"),
        R2 = user("root-2");
      const quorum = { rootIds: [R1.id, R2.id], threshold: 2 };
      // Everyone but a full root quorum.
      assert.equal(decideWith([p, ALLOW_ALL()], { ...k, by: [U.user] }, quorum).outcome, DENY_EXPLICIT);
      assert.equal(decideWith([p], { ...k, by: [R1] }, quorum).outcome, RC, "root pending keeps it open");
      const met = decideWith([p], { ...k, by: [R1, R2] }, quorum);
      assert.equal(met.outcome, ALLOW);
      assert.deepEqual(
        met.policies.map((x) => x.outcome),
        [DENY_EXPLICIT],
      );
      // Own credentials: the implicit permission yields to an explicit deny.
      const own = { type: "DELETE_API_KEYS", params: { user_id: U.user.id, api_key_ids: ["k1"] }, by: [U.user] };
      assert.equal(decideWith([p], own, { implicitlyAllowed: true }).outcome, DENY_EXPLICIT);
    },
  },
  {
    n: 47,
    effect: "ALLOW",
    consensus: "",
    condition: "true",
    cases: [
      c("CREATE_USERS_V4", "CREATE_USERS_V4", [U.other], ALLOW),
      c("DELETE_POLICIES", "DELETE_POLICIES", [U.noMail], ALLOW),
      c("SIGN_TRANSACTION_V2", "SIGN_TRANSACTION_V2", [U.user, U.other], ALLOW),
      c("DELETE_USERS", "DELETE_USERS", [U.user], ALLOW, { params: { user_ids: [BIND.USER_ID!] } }),
    ],
  },
  {
    n: 48,
    effect: "ALLOW",
    consensus: "approvers.any(user, user.id == '<USER_ID>')",
    condition: "activity.action != 'EXPORT'",
    cases: [
      c("CREATE_USERS_V4", "CREATE_USERS_V4", [U.user], ALLOW),
      c("SIGN_TRANSACTION_V2", "SIGN_TRANSACTION_V2", [U.user], ALLOW),
      c("DELETE_POLICIES", "DELETE_POLICIES", [U.user], ALLOW),
      c("EXPORT_WALLET", "EXPORT_WALLET", [U.user], NOT_APPLICABLE),
      c("EXPORT_PRIVATE_KEY", "EXPORT_PRIVATE_KEY", [U.user], NOT_APPLICABLE),
      c("someone else, CREATE_USERS_V4", "CREATE_USERS_V4", [U.other], RC),
    ],
  },
  {
    n: 49,
    effect: "ALLOW",
    consensus: "approvers.any(u, u.email == 'ops@example.com')",
    condition: "activity.kind == 'CREATE_TVC_APP' || activity.kind == 'CREATE_TVC_DEPLOYMENT'",
    cases: [
      c("ops e-mail, CREATE_TVC_APP", "CREATE_TVC_APP", [U.opsMail], ALLOW),
      c("ops e-mail, CREATE_TVC_DEPLOYMENT", "CREATE_TVC_DEPLOYMENT", [U.opsMail], ALLOW),
      c("another e-mail", "CREATE_TVC_APP", [U.devMail], RC),
      c("no e-mail reads ''", "CREATE_TVC_APP", [U.noMail], RC),
      c("another e-mail, then ops approves", "CREATE_TVC_DEPLOYMENT", [U.devMail, U.opsMail], ALLOW),
      c("CREATE_TVC_MANIFEST_APPROVALS", "CREATE_TVC_MANIFEST_APPROVALS", [U.opsMail], NOT_APPLICABLE),
    ],
  },
  {
    n: 50,
    effect: "ALLOW",
    consensus: "credentials.any(c, c.type == 'CREDENTIAL_TYPE_API_KEY_P256' && c.user_id == '<SERVICE_USER_ID>')",
    condition: "activity.kind in ['SET_IP_ALLOWLIST', 'REMOVE_IP_ALLOWLIST']",
    cases: [
      c("service API key, SET_IP_ALLOWLIST", "SET_IP_ALLOWLIST", [U.service], ALLOW, { creds: [apiKey(U.service)] }),
      c("service API key, REMOVE_IP_ALLOWLIST", "REMOVE_IP_ALLOWLIST", [U.service], ALLOW, { creds: [apiKey(U.service)] }),
      c("service passkey", "SET_IP_ALLOWLIST", [U.service], RC, { creds: [passkey(U.service)] }),
      c("another user's API key", "SET_IP_ALLOWLIST", [U.other], RC, { creds: [apiKey(U.other)] }),
      c("UPDATE_ALLOWED_ORIGINS (also CONFIG / UPDATE)", "UPDATE_ALLOWED_ORIGINS", [U.service], NOT_APPLICABLE, {
        creds: [apiKey(U.service)],
      }),
    ],
    extra: () => {
      assert.equal(act("SET_IP_ALLOWLIST").kind, "SET_IP_ALLOWLIST");
      assert.equal(act("REMOVE_IP_ALLOWLIST").kind, "REMOVE_IP_ALLOWLIST");
    },
  },
];

// ------------------------------------------------------------ the tests

describe("docs/policy-language.md §8 example policies", () => {
  it("covers rows 1–50 exactly once", () => {
    assert.deepEqual(
      ROWS.map((r) => r.n),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
  });

  for (const row of ROWS) {
    it(`row ${row.n}`, () => {
      const source = {
        id: `row-${row.n}`,
        effect: `EFFECT_${row.effect}` as const,
        condition: bind(row.condition),
        consensus: bind(row.consensus),
        time: row.time ?? "",
      };
      if (row.rejects) {
        assert.throws(
          () => compilePolicy(source),
          (err: unknown) => {
            assert.ok(err instanceof PolicyCompileError, `expected PolicyCompileError, got ${String(err)}`);
            assert.equal(err.field, "condition");
            assert.ok(err.message.includes(row.rejects!), err.message);
            return true;
          },
        );
        return;
      }
      const p = compilePolicy(source);
      assert.ok(row.cases && row.cases.length > 0, "test bug: a row needs cases");
      for (const k of row.cases) {
        const label = `row ${row.n}: ${k.what}`;
        const env = {
          activity: activityOf(k),
          approvers: k.by,
          credentials: k.creds ?? k.by.map((u) => apiKey(u)),
          nowMs: ms(k.at ?? DEFAULT_NOW),
        };
        const got = evaluatePolicy(p, env);
        assert.equal(got.policyId, source.id, label);
        assert.equal(got.outcome, k.expect, `${label}${got.error ? ` (${got.error})` : ""}`);
        if (k.expect === ERROR) {
          assert.ok(got.error, `${label}: OUTCOME_ERROR carries its error`);
          if (k.error) assert.ok(got.error.includes(k.error), `${label}: ${got.error}`);
        } else {
          assert.equal(got.error, undefined, label);
        }
        // The same policy as the org's only one, requester not root.
        const d = decideWith([p], k);
        assert.equal(d.outcome, finalFor(k.expect), `${label}: final outcome (${d.reason})`);
        assert.deepEqual(
          d.policies.map((x) => x.outcome),
          [k.expect],
          `${label}: recorded per-policy outcome`,
        );
      }
      row.extra?.(p);
    });
  }
});
