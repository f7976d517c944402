// § alone in this file: docs/policy-language.md
// Hand-built evaluation inputs for the policy-engine unit tests. The mapping below is
// written from docs/policy-language.md §4.5 / §4.7 on purpose (not imported from src/), so the
// tests check the engine against the note rather than against the service's own table.
import assert from "node:assert/strict";
import { activityKind, type ActivityFacts, type CredentialFacts, type ParamValue, type UserFacts } from "../../src/policy/index.ts";
import { compilePolicy, type CompiledPolicy, type Effect } from "../../src/policy/engine.ts";

type Meta = readonly [resource: string, action: string];

const META: Record<string, Meta> = {};
function map(resource: string, action: string, ...types: string[]): void {
  for (const t of types) META[t] = [resource, action];
}

// §4.5 / §4.7 (type names without the ACTIVITY_TYPE_ prefix).
map("ORGANIZATION", "CREATE", "CREATE_SUB_ORGANIZATION", ...[2, 3, 4, 5, 6, 7, 8].map((v) => `CREATE_SUB_ORGANIZATION_V${v}`));
map("ORGANIZATION", "DELETE", "DELETE_SUB_ORGANIZATION", "DELETE_ORGANIZATION");
map("POLICY", "CREATE", "CREATE_POLICY", "CREATE_POLICY_V2", "CREATE_POLICY_V3", "CREATE_POLICIES");
map("POLICY", "UPDATE", "UPDATE_POLICY", "UPDATE_POLICY_V2");
map("POLICY", "DELETE", "DELETE_POLICY", "DELETE_POLICIES");
map("WALLET", "CREATE", "CREATE_WALLET", "CREATE_WALLET_ACCOUNTS");
map("WALLET", "EXPORT", "EXPORT_WALLET", "EXPORT_WALLET_ACCOUNT");
map("PRIVATE_KEY", "SIGN", "SIGN_TRANSACTION", "SIGN_TRANSACTION_V2", "SIGN_RAW_PAYLOAD_V2");
map("PRIVATE_KEY", "EXPORT", "EXPORT_PRIVATE_KEY");
map("USER", "CREATE", "CREATE_USERS", "CREATE_USERS_V2", "CREATE_USERS_V3", "CREATE_USERS_V4", "CREATE_API_ONLY_USERS", "CREATE_USER_TAG");
map("USER", "UPDATE", "UPDATE_USER", "UPDATE_USER_NAME", "RECOVER_USER");
map("USER", "DELETE", "DELETE_USERS", "DELETE_USER_TAGS");
map("CREDENTIAL", "CREATE", "CREATE_API_KEYS", "CREATE_API_KEYS_V2", "CREATE_AUTHENTICATORS", "CREATE_AUTHENTICATORS_V2");
map("CREDENTIAL", "DELETE", "DELETE_API_KEYS", "DELETE_AUTHENTICATORS");
map(
  "AUTH",
  "CREATE",
  "STAMP_LOGIN",
  "OTP_LOGIN",
  "OTP_LOGIN_V2",
  "OAUTH_LOGIN",
  "OAUTH2_AUTHENTICATE",
  "CREATE_OAUTH2_CREDENTIAL",
  "INIT_OTP_AUTH_V3",
  "CREATE_READ_WRITE_SESSION",
  "CREATE_READ_WRITE_SESSION_V2",
  "EMAIL_AUTH_V3",
  "OTP_AUTH",
  "OAUTH",
);
map("AUTH", "UPDATE", "UPDATE_OAUTH2_CREDENTIAL");
map("AUTH", "DELETE", "DELETE_OAUTH2_CREDENTIAL");
map("OTP", "CREATE", "INIT_OTP_V2", "INIT_OTP_V3");
map("OTP", "VERIFY", "VERIFY_OTP_V2");
map("WEBHOOK_ENDPOINT", "CREATE", "CREATE_WEBHOOK_ENDPOINT");
map("WEBHOOK_ENDPOINT", "UPDATE", "UPDATE_WEBHOOK_ENDPOINT");
map("WEBHOOK_ENDPOINT", "DELETE", "DELETE_WEBHOOK_ENDPOINT");
map("MFA_POLICY", "CREATE", "CREATE_MFA_POLICY");
map("MFA_POLICY", "UPDATE", "UPDATE_MFA_POLICY");
map("MFA_POLICY", "DELETE", "DELETE_MFA_POLICY");
map("TVC_APP", "CREATE", "CREATE_TVC_APP");
map("TVC_DEPLOYMENT", "CREATE", "CREATE_TVC_DEPLOYMENT");
map("TVC_DEPLOYMENT", "UPDATE", "CREATE_TVC_MANIFEST_APPROVALS");
map("CONFIG", "UPDATE", "SET_IP_ALLOWLIST", "UPDATE_ALLOWED_ORIGINS");
map("CONFIG", "DELETE", "REMOVE_IP_ALLOWLIST");
map("SESSION_PROFILE", "CREATE", "CREATE_SESSION_PROFILE");
map("RECOVERY", "CREATE", "INIT_USER_EMAIL_RECOVERY_V2");
// §4.9: root-quorum-only types never reach policy evaluation; upstream gives them no resource/action.
map("", "", "UPDATE_ROOT_QUORUM", "SET_ORGANIZATION_FEATURE", "REMOVE_ORGANIZATION_FEATURE", "UPDATE_ORGANIZATION_NAME");

/** §4.7 "params" column: exposed fields, and the default an optional one reads as when omitted. */
const EXPOSED: Record<string, Record<string, ParamValue | undefined>> = {
  DELETE_USERS: { user_ids: undefined },
  CREATE_API_KEYS: { user_id: undefined },
  CREATE_API_KEYS_V2: { user_id: undefined },
  DELETE_API_KEYS: { user_id: undefined, api_key_ids: undefined },
  UPDATE_WEBHOOK_ENDPOINT: { endpoint_id: undefined },
  DELETE_WEBHOOK_ENDPOINT: { endpoint_id: undefined },
  STAMP_LOGIN: { session_profile_id: "" },
  OTP_LOGIN: { session_profile_id: "" },
  OTP_LOGIN_V2: { session_profile_id: "" },
  OAUTH_LOGIN: { session_profile_id: "" },
  INIT_OTP_AUTH_V3: { otp_length: 6n },
};

export const ROOT_ONLY_TYPES: ReadonlySet<string> = new Set([
  "UPDATE_ROOT_QUORUM",
  "SET_ORGANIZATION_FEATURE",
  "REMOVE_ORGANIZATION_FEATURE",
  "UPDATE_ORGANIZATION_NAME",
]);

/**
 * Facts for one activity. `short` is the type without `ACTIVITY_TYPE_`. Params must be
 * exactly those §4.7 exposes for the type; optional ones take their documented default.
 */
export function act(short: string, params: Record<string, ParamValue> = {}): ActivityFacts {
  const meta = META[short];
  assert.ok(meta, `test bug: no §4.5 mapping for ${short}`);
  const exposed = EXPOSED[short] ?? {};
  const out: Record<string, ParamValue> = {};
  for (const [name, dflt] of Object.entries(exposed)) {
    const v = Object.hasOwn(params, name) ? params[name] : dflt;
    assert.ok(v !== undefined, `test bug: ${short} exposes ${name}; give it`);
    out[name] = v;
  }
  for (const name of Object.keys(params)) assert.ok(Object.hasOwn(exposed, name), `test bug: ${short} does not expose ${name}`);
  const type = `ACTIVITY_TYPE_${short}`;
  return { type, kind: activityKind(type), resource: meta[0], action: meta[1], params: out };
}

export function user(id: string, tags: readonly string[] = [], email = "", alias = ""): UserFacts {
  return { id, tags, email, alias };
}

export const API_KEY_P256 = "CREDENTIAL_TYPE_API_KEY_P256";
export const WEBAUTHN = "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR";

export function apiKey(u: UserFacts, publicKey = `02${u.id.replace(/-/g, "")}`): CredentialFacts {
  return { id: `key-${u.id}`, user_id: u.id, type: API_KEY_P256, credential_id: "", public_key: publicKey };
}

export function passkey(u: UserFacts, publicKey = `04${u.id.replace(/-/g, "")}`): CredentialFacts {
  return { id: `authn-${u.id}`, user_id: u.id, type: WEBAUTHN, credential_id: `cred-${u.id}`, public_key: publicKey };
}

let seq = 0;
export function policy(effect: "ALLOW" | "DENY", consensus: string, condition: string, time = "", id?: string): CompiledPolicy {
  return compilePolicy({ id: id ?? `policy-${++seq}`, effect: `EFFECT_${effect}` as Effect, condition, consensus, time });
}

export const ms = (iso: string): number => {
  const t = Date.parse(iso);
  assert.ok(Number.isFinite(t), `test bug: bad time ${iso}`);
  return t;
};

/** `[0, …, n-1]` as a policy-language list literal. */
export const literalList = (n: number): string => `[${Array.from({ length: n }, (_, i) => i).join(", ")}]`;

/**
 * `L.all(v0, L.all(v1, … true))`: `depth` nested lambdas over literal lists of `n`
 * (docs/policy-language.md §11). `nestedAll(100, 4)` is the 1.3 KB policy of 10^8 iterations
 * that the static bound refuses.
 */
export function nestedAll(n: number, depth: number, body = "true"): string {
  for (let d = depth - 1; d >= 0; d--) body = `${literalList(n)}.all(v${d}, ${body})`;
  return body;
}
