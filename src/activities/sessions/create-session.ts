// Sessions (docs/logins.md §2): a login registers the client's P-256 public key as an expiring
// credential of the user (an api_keys row of type CREDENTIAL_TYPE_LOGIN, so X-Stamp verifies
// it like any key and its expiry answers "expired api key") and returns a session JWT signed
// with the SESSION_JWT service key. stamp_login, otp_login, the attested stamp_login
// (both schemes) and oauth_login all end here.
import { invalid, notFound, alreadyExists } from "../../errors.ts";
import { publicKeyProblem } from "../../crypto/public-keys.ts";
import type { ExecuteContext } from "../define.ts";
import { lockUsers } from "../../store/locks.ts";
import { isUniqueViolation, newId } from "../../store/util.ts";
import { signSessionJwt } from "../../auth/tokens.ts";
import { organizationsAbove, refuseAncestorKeys } from "../credentials/ancestor-keys.ts";
import { makeRoomForExpiringKeys } from "../credentials/api-keys.ts";
import { visibleSessionProfile, type SessionProfileRow } from "../../store/session-profiles.ts";

/** 15 minutes when the login names no expirationSeconds (docs/logins.md §2.2). */
export const DEFAULT_SESSION_SECONDS = 900;

/**
 * The session length a login asked for, in seconds: a positive integer string up to the
 * configured maximum (config SIGIL_SESSION_MAX_SECONDS); 900 when absent.
 */
export function sessionSeconds(given: string | undefined, max: number, field = "parameters.expirationSeconds"): number {
  if (given === undefined || given === "") return DEFAULT_SESSION_SECONDS;
  const secs = /^\d{1,12}$/.test(given) ? Number(given) : NaN;
  if (!(secs >= 1 && secs <= max)) {
    throw invalid(`invalid api key expiration: ${field} must be a whole number of seconds from 1 to ${max}`, [
      { field, description: `1 to ${max}` },
    ]);
  }
  return secs;
}

export interface NewSession {
  userId: string;
  /** The organization the user lives in. */
  organizationId: string;
  /** Compressed (or uncompressed) P-256 hex: the key the client will stamp with. */
  publicKey: string;
  expirationSeconds?: string;
  invalidateExisting?: boolean;
  sessionProfileId?: string;
  field?: string;
  /**
   * LOGIN for the login flows; READ_WRITE_SESSION_KEY_P256 for create_read_write_session's
   * legacy sessions (docs/sessions-and-network.md §7.1). invalidateExisting revokes the
   * sessions of the same kind.
   */
  credentialType?: SessionCredentialType;
  /** The key's name (default `Session <ISO time>`). */
  name?: string;
}

/** The api_keys types of sessions: both expire, so both count among (and make room in) a user's expiring keys. */
export type SessionCredentialType = "CREDENTIAL_TYPE_LOGIN" | "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256";

export async function createSession(
  ctx: ExecuteContext<unknown>,
  s: NewSession,
): Promise<{ session: string; apiKeyId: string; expiresAt: number }> {
  const field = s.field ?? "parameters";
  const problem = publicKeyProblem("API_KEY_CURVE_P256", s.publicKey);
  if (problem) throw invalid(`${field}.publicKey: ${problem}`, [{ field: `${field}.publicKey`, description: problem }]);
  const { tx, now } = ctx;
  const max = ctx.services.logins.sessionMaxSeconds;
  let secs = sessionSeconds(s.expirationSeconds, max, `${field}.expirationSeconds`);
  const profile =
    s.sessionProfileId !== undefined
      ? await sessionProfileFor(ctx, s.organizationId, s.sessionProfileId, `${field}.sessionProfileId`)
      : undefined;
  // The profile's expirationSeconds is a ceiling: the login's own value when shorter, the
  // profile's when the login names none (docs/sessions-and-network.md §6.2); never above the configured maximum.
  if (profile?.expiration_seconds) {
    const ceiling = Math.min(Number(profile.expiration_seconds), max);
    secs = s.expirationSeconds === undefined || s.expirationSeconds === "" ? ceiling : Math.min(secs, ceiling);
  }
  const expiresAt = now + secs * 1000;

  // The user row lock serialises this user's key writers (sessions, create_api_keys) on
  // PostgreSQL, so the cap below counts what is committed; it also proves the user exists.
  const [locked] = await lockUsers(tx, s.organizationId, [s.userId]);
  if (!locked) throw notFound(`no user ${s.userId} in organization ${s.organizationId}`);
  const normalized = s.publicKey.toLowerCase();
  // A session key is a credential like any API key: not one of an organization above the
  // user's unless that organization is the one logging the user in (ancestor-keys.ts).
  await refuseAncestorKeys(tx, await organizationsAbove(tx, s.organizationId, ctx.chains), ctx.actor.organizationId, [
    { publicKey: s.publicKey, field: `${field}.publicKey` },
  ]);
  const credentialType = s.credentialType ?? "CREDENTIAL_TYPE_LOGIN";
  let logins = tx.deleteFrom("api_keys").where("user_id", "=", s.userId).where("credential_type", "=", credentialType);
  // invalidateExisting revokes every other session; otherwise only expired keys and an
  // earlier session of this very key (a refresh with the same key) go.
  logins = s.invalidateExisting
    ? logins
    : logins.where((eb) => eb.or([eb("expires_at", "<=", now), eb("public_key_normalized", "=", normalized)]));
  await logins.execute();
  // At most MAX_EXPIRING_KEYS per user, sessions included: expired keys, else the oldest
  // expiring ones, make room (docs/organizations.md §3.2).
  await makeRoomForExpiringKeys(tx, s.userId, 1, now);

  const apiKeyId = newId();
  try {
    await tx
      .insertInto("api_keys")
      .values({
        id: apiKeyId,
        organization_id: s.organizationId,
        user_id: s.userId,
        name: s.name ?? `Session ${new Date(now).toISOString()}`,
        public_key: s.publicKey,
        public_key_normalized: normalized,
        curve: "API_KEY_CURVE_P256",
        credential_type: credentialType,
        expiration_seconds: String(secs),
        expires_at: expiresAt,
        session_profile_id: s.sessionProfileId ?? null,
        allowlist_public_key: inheritedAllowlistKey(ctx, s.organizationId),
        created_at: now,
        updated_at: now,
      })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err, "api_keys")) {
      throw alreadyExists(
        `${field}.publicKey: this public key is already a credential in organization ${s.organizationId}; use a fresh key pair for the session`,
      );
    }
    throw err;
  }
  const key = await ctx.services.serviceKey("SESSION_JWT");
  const session = signSessionJwt(key, {
    exp: Math.floor(expiresAt / 1000),
    public_key: s.publicKey,
    // As upstream: a profiled session's type is the profile's name, and it carries the scope.
    session_type: profile ? profile.name : "SESSION_TYPE_READ_WRITE",
    user_id: s.userId,
    organization_id: s.organizationId,
    ...(profile ? { session_profile_id: profile.id, scope: profile.scope } : {}),
  });
  return { session, apiKeyId, expiresAt };
}

/**
 * The profile a login names, if the session user's organization may use it: one made by that
 * organization or an organization above it (docs/sessions-and-network.md §6.1). Another
 * tenant's profile — a sibling's, a sub-organization's — is answered as unknown.
 */
async function sessionProfileFor(
  ctx: ExecuteContext<unknown>,
  organizationId: string,
  id: string,
  field: string,
): Promise<SessionProfileRow> {
  const profile = await visibleSessionProfile(ctx.tx, organizationId, id, ctx.chains);
  if (!profile) throw notFound(`${field}: no session profile ${id} in organization ${organizationId} or the organizations above it`);
  return profile;
}

/**
 * The key list the new session is bound to (docs/sessions-and-network.md §1):
 * that of the API key stamping the login (already resolved, for a session
 * making a session) when it belongs to the session's organization — the lists are per
 * organization, and only a root organization's are evaluated. A parent's backend logging in a
 * sub-organization's user (oauth_login, otp_login) binds nothing: the session belongs to the
 * user, in an organization whose lists are never evaluated. No caller (an activity executed
 * by a later approval) binds nothing either.
 */
function inheritedAllowlistKey(ctx: ExecuteContext<unknown>, sessionOrganizationId: string): string | null {
  const key = ctx.caller?.publicKey;
  if (key === undefined || ctx.actor.organizationId !== sessionOrganizationId) return null;
  return key;
}

/** The session parameters every login intent carries (stamp_login, otp_login, oauth_login). */
export interface LoginParams {
  publicKey: string;
  expirationSeconds?: string;
  invalidateExisting?: boolean;
  sessionProfileId?: string;
}

/** The session a login creates for `user`, from its intent's parameters. */
export async function loginSession(
  ctx: ExecuteContext<unknown>,
  user: { userId: string; organizationId: string },
  p: LoginParams,
): Promise<string> {
  const { session } = await createSession(ctx, {
    ...user,
    publicKey: p.publicKey,
    ...(p.expirationSeconds !== undefined ? { expirationSeconds: p.expirationSeconds } : {}),
    ...(p.invalidateExisting !== undefined ? { invalidateExisting: p.invalidateExisting } : {}),
    ...(p.sessionProfileId !== undefined ? { sessionProfileId: p.sessionProfileId } : {}),
  });
  return session;
}
