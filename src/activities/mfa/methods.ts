// Authentication methods of MFA policies (docs/mfa.md §2): the SDK's v1AuthenticationType,
// what a request's credential proves, and how proofs meet a policy's steps.
import { Type } from "@sinclair/typebox";
import { UUID_PATTERN } from "../../schemas/common.ts";
import type { Executor } from "../../store/schema.ts";
import type { Principal } from "../../auth/principal.ts";
import { AUTHENTICATION_TYPES, type AuthenticationType, type Method, type Proof, type Step } from "../../schemas/mfa.ts";

export { AUTHENTICATION_TYPES, methodView, type AuthenticationType, type Method, type Proof, type Step } from "../../schemas/mfa.ts";

/** Types whose methods have no id: a policy naming one is refused (docs/mfa.md §2). */
const WITHOUT_ID: ReadonlySet<AuthenticationType> = new Set(["AUTHENTICATION_TYPE_EMAIL_OTP", "AUTHENTICATION_TYPE_SMS_OTP"]);

/**
 * The session profile id a session made without one answers to (upstream's default
 * read/write session, docs/mfa.md §2).
 */
export const DEFAULT_SESSION_PROFILE_ID = "00000000-0000-0000-0000-000000000000";

export const MAX_STEPS = 5;
export const MAX_METHODS_PER_STEP = 6;

/** v1AuthenticationMethodParams. `invitationIds` is in the SDK type; only an empty list is accepted. */
const MethodParams = Type.Object({
  type: Type.Union(
    AUTHENTICATION_TYPES.map((t) => Type.Literal(t)),
    { errorMessage: `type must be one of ${AUTHENTICATION_TYPES.join(", ")}` },
  ),
  id: Type.Optional(
    Type.String({
      pattern: UUID_PATTERN,
      errorMessage: "id must be an authenticator, API key, OAuth provider or session profile id (UUID)",
    }),
  ),
  invitationIds: Type.Optional(
    Type.Array(Type.String(), { maxItems: 0, errorMessage: "invitationIds is not used by MFA policies and must be empty" }),
  ),
});

/** v1RequiredAuthenticationMethodParams: one step, met by any of its methods. */
const StepParams = Type.Object({
  any: Type.Array(MethodParams, {
    minItems: 1,
    maxItems: MAX_METHODS_PER_STEP,
    errorMessage: `each step's any must hold 1 to ${MAX_METHODS_PER_STEP} methods`,
  }),
});

export const RequiredMethodsParams = Type.Array(StepParams, {
  minItems: 1,
  maxItems: MAX_STEPS,
  errorMessage: `requiredAuthenticationMethods must hold 1 to ${MAX_STEPS} steps`,
});

/** The steps as stored: only type and id, in the order given. */
export function normalizeSteps(steps: readonly { any: readonly { type: AuthenticationType; id?: string | undefined }[] }[]): Step[] {
  return steps.map((s) => ({ any: s.any.map((m) => (m.id !== undefined ? { type: m.type, id: m.id.toLowerCase() } : { type: m.type })) }));
}

/** The first step's method that names an id its type cannot have, for the error message. */
export function idlessProblem(steps: readonly Step[]): string | undefined {
  for (const [i, s] of steps.entries()) {
    for (const m of s.any) if (m.id !== undefined && WITHOUT_ID.has(m.type)) return `step ${i}: ${m.type} has no id`;
  }
  return undefined;
}

function meets(required: Method, proof: Method): boolean {
  return required.type === proof.type && (required.id === undefined || required.id === proof.id);
}

/**
 * The steps met once `proof` is added to `satisfied` (one entry per step, null while unmet),
 * or undefined when the proof meets no unmet step — or its credential already met one
 * (docs/mfa.md §3: steps in any order, one credential per step).
 */
export function withProof(steps: readonly Step[], satisfied: readonly (Proof | null)[], proof: Proof): (Proof | null)[] | undefined {
  if (satisfied.some((p) => p?.credential === proof.credential)) return undefined;
  const i = steps.findIndex((s, k) => !satisfied[k] && s.any.some((m) => meets(m, proof)));
  if (i < 0) return undefined;
  const next = steps.map((_, k) => satisfied[k] ?? null);
  next[i] = proof;
  return next;
}

export const allMet = (satisfied: readonly (Proof | null)[]): boolean => satisfied.every((p) => p !== null);

/**
 * What the request's credential proves (docs/mfa.md §2): an API key, a session (by the
 * profile it was issued with), a passkey, or — for an attested stamp — the email or SMS OTP
 * or the OAuth identity behind it. Sessions are not transitive: a session proves a session,
 * whatever login made it.
 */
export async function proofOf(db: Executor, p: Principal): Promise<Proof> {
  const credential = p.credential.id;
  switch (p.credential.type) {
    case "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR":
      return { type: "AUTHENTICATION_TYPE_PASSKEY", id: credential, credential };
    case "CREDENTIAL_TYPE_LOGIN": {
      const row = await db.selectFrom("api_keys").select("session_profile_id").where("id", "=", credential).executeTakeFirst();
      return { type: "AUTHENTICATION_TYPE_SESSION", id: (row?.session_profile_id ?? DEFAULT_SESSION_PROFILE_ID).toLowerCase(), credential };
    }
    case "CREDENTIAL_TYPE_OTP_AUTH_KEY_P256": {
      if (p.stamp.scheme === "STAMP_ATTESTED_SCHEME_P256_OIDC") return { type: "AUTHENTICATION_TYPE_OAUTH", credential };
      const token = await db.selectFrom("verification_tokens").select("verification_type").where("id", "=", credential).executeTakeFirst();
      return {
        type: token?.verification_type === "OTP_TYPE_SMS" ? "AUTHENTICATION_TYPE_SMS_OTP" : "AUTHENTICATION_TYPE_EMAIL_OTP",
        credential,
      };
    }
    default:
      return { type: "AUTHENTICATION_TYPE_API_KEY", id: credential, credential };
  }
}
