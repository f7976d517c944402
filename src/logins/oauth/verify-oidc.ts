// Verifying an OIDC token (docs/oauth.md §5): what oauth_login, the attested OIDC
// stamp, create_oauth_providers, sign-up with OAuth root users and list_suborgs's OIDC_TOKEN
// filter accept. The token's `iss` chooses its keys:
//   - Sigil itself (`iss` = SIGIL_PUBLIC_URL): the OIDC_TOKEN service keys, read from the
//     database (active and published), never over HTTP;
//   - a configured trusted issuer (SIGIL_OAUTH_PROVIDERS_FILE `issuers`): its JWKS, fetched
//     with the configured timeout and cached per store and per JWKS URL;
//   - anything else is refused before any request is made: an issuer named by a token is
//     never fetched (a token must not make the service call an address of its choosing).
// Then `exp` (with a small leeway), `iss`, `aud` and `sub` must be present and valid.
// Nothing here checks the nonce (logins/oauth/nonce.ts: logins do, registration does not).
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  importJWK,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from "jose";
import { ApiError, Grpc } from "../../errors.ts";
import type { Executor } from "../../store/schema.ts";
import type { OAuthSettings } from "./settings.ts";
import { verifyingKeyRecords } from "../../auth/service-keys.ts";
import { p256Jwk } from "./oidc-issuer.ts";
import { Lru } from "../../cache/lru.ts";

/** Clock skew tolerated on `exp` / `iat` / `nbf`, seconds. */
export const OIDC_LEEWAY_SECONDS = 60;
/** Longer than any real ID token (a few kilobytes at most); bounds the work on garbage. */
export const MAX_OIDC_TOKEN_LENGTH = 8192;

/** Algorithms a trusted issuer may sign with: asymmetric only (never `none`, never HMAC). */
const TRUSTED_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
/** Sigil signs its own tokens with its P-256 OIDC_TOKEN keys. */
const OWN_ALGORITHMS = ["ES256"];

/** What a verified token says (the token itself is never stored). */
export interface OidcIdentity {
  iss: string;
  sub: string;
  /** Every audience the token names (`aud` may be a string or an array). */
  aud: string[];
  nonce?: string;
  tknonce?: string;
  email?: string;
  email_verified?: boolean;
  /** Authorized party (OIDC): the client an ID token with several audiences was issued to. */
  azp?: string;
  /** Expiry, epoch seconds. */
  exp: number;
}

export class OidcTokenProblem extends Error {
  override readonly name = "OidcTokenProblem";
}

export interface VerifyOptions {
  now: number;
  /** When set, `aud` must name one of these. */
  audiences?: readonly string[];
}

/** The error activities and queries answer with: 400 INVALID_OIDC_TOKEN naming the field. */
export function invalidOidcToken(field: string, problem: string): ApiError {
  return new ApiError(Grpc.INVALID_ARGUMENT, "INVALID_OIDC_TOKEN", `${field}: invalid OIDC token: ${problem}`, [
    { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field, description: problem }] },
  ]);
}

/** `iss` compared as issuers are written (a trailing slash is not a different issuer). */
const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

/**
 * Remote key sets per store (the database handle), then per JWKS URL: two stores in one
 * process never share one, and jose's own cache (cooldown, max age, refetch on an unknown
 * kid) lives inside each set.
 */
const remoteSets = new WeakMap<object, Map<string, JWTVerifyGetKey>>();

function remoteSet(store: object, jwksUrl: string, timeoutMs: number): JWTVerifyGetKey {
  let sets = remoteSets.get(store);
  if (!sets) remoteSets.set(store, (sets = new Map<string, JWTVerifyGetKey>()));
  const key = `${timeoutMs} ${jwksUrl}`;
  let set = sets.get(key);
  if (!set) {
    set = createRemoteJWKSet(new URL(jwksUrl), { timeoutDuration: timeoutMs, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
    sets.set(key, set);
  }
  return set;
}

// Imported verifying keys by id and point: a key id never changes its point, so an entry is
// never stale; which keys still verify is read from the database on every verification (a
// retired key stops at once). Service keys are few; the bound only guards against growth.
type ImportedKey = ReturnType<typeof importJWK>;
const MAX_IMPORTED = 64;
const imported = new Lru<ImportedKey>(MAX_IMPORTED);

function importedKey(id: string, publicKey: string): ImportedKey {
  const k = `${id}:${publicKey}`;
  let key = imported.get(k);
  if (!key) {
    key = importJWK(p256Jwk(id, publicKey), "ES256");
    key.catch(() => imported.delete(k)); // a failed import is not remembered
    imported.set(k, key);
  }
  return key;
}

/** Sigil's verifying keys (active and published OIDC_TOKEN keys), chosen by the header's kid. */
async function ownKeys(db: Executor): Promise<JWTVerifyGetKey> {
  const records = await verifyingKeyRecords(db, "OIDC_TOKEN");
  return async (header) => {
    const record = records.find((k) => k.id === header.kid);
    if (!record) {
      throw new OidcTokenProblem(
        header.kid ? `signed by an unknown key (kid ${JSON.stringify(String(header.kid).slice(0, 64))})` : "the token names no key (kid)",
      );
    }
    return importedKey(record.id, record.publicKey);
  };
}

/** jose's failure as one sentence a client can act on. */
function problemOf(err: unknown): string {
  if (err instanceof OidcTokenProblem) return err.message;
  if (err instanceof errors.JWTExpired) return "the token has expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "nbf" || err.claim === "iat") return `the token is not valid yet (${err.claim})`;
    if (err.reason === "missing") return `the token has no ${err.claim} claim`;
    return `${err.claim}: ${err.message}`;
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return "signature verification failed";
  if (err instanceof errors.JOSEAlgNotAllowed) return "the token's signature algorithm is not accepted";
  if (err instanceof errors.JWKSNoMatchingKey) return "no key of the issuer's JWKS matches the token (kid / alg)";
  if (err instanceof errors.JWKSTimeout) return "the issuer's JWKS could not be fetched in time";
  if (err instanceof errors.JWKSInvalid) return "the issuer's JWKS is not a valid key set";
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return "malformed token";
  if (err instanceof errors.JOSENotSupported) return "the token uses an unsupported algorithm or key";
  if (err instanceof errors.JOSEError) return `rejected (${err.code})`;
  // fetch failures (connection refused, DNS, TLS): the issuer's keys are unavailable.
  return "the issuer's JWKS could not be fetched";
}

function optionalString(p: JWTPayload, name: string): string | undefined {
  const v = p[name];
  return typeof v === "string" && v !== "" ? v : undefined;
}

/**
 * Verifies `token`; throws OidcTokenProblem with what is wrong. `db` reads Sigil's own keys
 * and keys the JWKS cache: pass the store's handle (a transaction would get a cache of its
 * own). `settings` undefined: no issuer is trusted (Sigil's public URL is unknown).
 */
export async function verifyOidcToken(
  db: Executor,
  token: string,
  settings: OAuthSettings | undefined,
  opts: VerifyOptions,
): Promise<OidcIdentity> {
  if (typeof token !== "string" || token.length === 0) throw new OidcTokenProblem("must be set");
  if (token.length > MAX_OIDC_TOKEN_LENGTH) throw new OidcTokenProblem(`longer than ${MAX_OIDC_TOKEN_LENGTH} characters`);
  let claims: JWTPayload;
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
    claims = decodeJwt(token);
  } catch {
    throw new OidcTokenProblem("malformed token (expected a signed JWT: header.payload.signature)");
  }
  if (alg === "none" || token.split(".").length !== 3 || token.endsWith("."))
    throw new OidcTokenProblem("unsigned tokens (alg none) are not accepted");
  const iss = claims.iss;
  if (typeof iss !== "string" || iss === "") throw new OidcTokenProblem("the token has no iss claim");

  let keys: JWTVerifyGetKey;
  let algorithms: string[];
  if (settings?.publicUrl && sameIssuer(iss, settings.publicUrl)) {
    keys = await ownKeys(db);
    algorithms = OWN_ALGORITHMS;
  } else {
    const trusted = settings?.issuers.find((i) => sameIssuer(i.issuer, iss));
    if (!trusted) throw new OidcTokenProblem(`issuer ${JSON.stringify(iss.slice(0, 200))} is not trusted by this server`);
    keys = remoteSet(db, trusted.jwksUrl, settings!.timeoutMs);
    algorithms = TRUSTED_ALGORITHMS;
  }

  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      algorithms,
      issuer: iss,
      clockTolerance: OIDC_LEEWAY_SECONDS,
      currentDate: new Date(opts.now),
      requiredClaims: ["exp", "sub", "aud"],
      ...(opts.audiences ? { audience: [...opts.audiences] } : {}),
    }));
  } catch (err) {
    throw new OidcTokenProblem(problemOf(err));
  }
  const sub = payload.sub;
  if (typeof sub !== "string" || sub === "") throw new OidcTokenProblem("the token has no sub claim");
  const aud =
    typeof payload.aud === "string"
      ? [payload.aud]
      : Array.isArray(payload.aud)
        ? payload.aud.filter((a): a is string => typeof a === "string" && a !== "")
        : [];
  if (aud.length === 0) throw new OidcTokenProblem("the token has no aud claim");
  const identity: OidcIdentity = { iss, sub, aud, exp: payload.exp! };
  const nonce = optionalString(payload, "nonce");
  const tknonce = optionalString(payload, "tknonce");
  const email = optionalString(payload, "email");
  const azp = optionalString(payload, "azp");
  if (nonce) identity.nonce = nonce;
  if (tknonce) identity.tknonce = tknonce;
  if (email) identity.email = email;
  if (azp) identity.azp = azp;
  // Google sends a boolean, some providers the string "true".
  const ev = payload.email_verified;
  if (ev === true || ev === "true") identity.email_verified = true;
  else if (ev === false || ev === "false") identity.email_verified = false;
  return identity;
}

/** As verifyOidcToken, failures as the 400 INVALID_OIDC_TOKEN naming `field`. */
export async function requireOidcToken(
  db: Executor,
  token: string,
  settings: OAuthSettings | undefined,
  field: string,
  opts: VerifyOptions,
): Promise<OidcIdentity> {
  try {
    return await verifyOidcToken(db, token, settings, opts);
  } catch (err) {
    if (err instanceof OidcTokenProblem) throw invalidOidcToken(field, err.message);
    throw err;
  }
}

/**
 * The one audience an identity is stored under: the token's only audience, or, for a token
 * naming several, its authorized party (azp) when that is one of them.
 */
export function singleAudience(identity: OidcIdentity): string | undefined {
  if (identity.aud.length === 1) return identity.aud[0];
  if (identity.azp && identity.aud.includes(identity.azp)) return identity.azp;
  return undefined;
}
