// X-Session (docs/sessions-and-network.md §7.2): the read-only session token that
// create_read_only_session returns, which @turnkey/sdk-browser sends as the X-Session header
// (its client config `readOnlySession`). A bearer token, so it may only read: the strategy
// declares that it signs no activity, and the pipeline refuses every submission with a 403
// before anything is recorded (auth/strategies.ts refuseUnsignableRoute).
//
// The token is a session JWT (auth/tokens.ts: ES256 over SHA-256(SHA-256(header.payload)),
// SESSION_JWT key) with session_type SESSION_TYPE_READ_ONLY, a `jti` and no `public_key`: the
// login JWTs always carry a public_key, so none of them — which clients hand around as
// metadata — is ever accepted here.
//   verify  — the token's form (no store);
//   resolve — the signature with the SESSION_JWT keys, the expiry, then the user it names,
//             who must still exist, found as any credential is (credential-scope.ts).
import { permissionDenied, unauthenticated } from "../errors.ts";
import { sha256, signP256, verifyP256 } from "../crypto/p256.ts";
import { atobSafe, jwtParts } from "./tokens.ts";
import type { Db } from "../store/schema.ts";
import type { ChainCache } from "../store/organizations.ts";
import { resolveHolder, type CredentialScope } from "./credential-scope.ts";
import { HOLDER_COLUMNS, holderParts } from "./holder.ts";
import type { Principal } from "./principal.ts";
import { verifyingKeys, type ServiceKey } from "./service-keys.ts";
import { kindAndId, type Resolution, type Rider, type StampStrategy, type VerifiedStamp } from "./strategy.ts";

/** principal.credential.kind of a read-only session; also the prefix of its rate-limit bucket. */
const KIND = "read_only_session";
export const READ_ONLY_SESSION_TYPE = "SESSION_TYPE_READ_ONLY";
/** Upstream: "valid for 1 hour" (capped by SIGIL_SESSION_MAX_SECONDS). */
export const READ_ONLY_SESSION_SECONDS = 3600;

const MAX_TOKEN_LENGTH = 4096;
const PART = /^[A-Za-z0-9_-]+={0,2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ReadOnlyClaims {
  exp: number;
  jti: string;
  session_type: typeof READ_ONLY_SESSION_TYPE;
  user_id: string;
  organization_id: string;
  /** The lower-case public key whose IP allowlist binds the session (docs/sessions-and-network.md §1). */
  allowlist_public_key?: string;
}

const malformed = () => unauthenticated("UNAUTHENTICATED", "malformed X-Session: not a read-only session token");
const invalidSession = (why: string) => unauthenticated("UNAUTHENTICATED", `invalid X-Session: ${why}`);

interface Decoded {
  claims: ReadOnlyClaims;
  input: string;
  signature: string;
}

function decode(value: string | string[]): Decoded {
  if (Array.isArray(value)) throw unauthenticated("UNAUTHENTICATED", "exactly one X-Session header is allowed");
  if (!value || value.length > MAX_TOKEN_LENGTH) throw malformed();
  if (!value.split(".").every((p) => PART.test(p))) throw malformed();
  const jwt = jwtParts(value);
  if (!jwt || jwt.header.alg !== "ES256") throw malformed();
  const { payload } = jwt;
  const { exp, jti, session_type, user_id, organization_id, public_key, allowlist_public_key } = payload;
  if (
    session_type !== READ_ONLY_SESSION_TYPE ||
    public_key !== undefined ||
    typeof exp !== "number" ||
    typeof jti !== "string" ||
    !UUID.test(jti) ||
    typeof user_id !== "string" ||
    !UUID.test(user_id) ||
    typeof organization_id !== "string" ||
    !UUID.test(organization_id) ||
    (allowlist_public_key !== undefined && typeof allowlist_public_key !== "string")
  ) {
    throw malformed();
  }
  const { signature } = jwt;
  if (signature.length !== 64) throw malformed();
  const claims: ReadOnlyClaims = {
    exp,
    jti,
    session_type: READ_ONLY_SESSION_TYPE,
    user_id,
    organization_id,
    ...(typeof allowlist_public_key === "string" ? { allowlist_public_key } : {}),
  };
  return { claims, input: jwt.input, signature: signature.toString("hex") };
}

async function resolve<T>(
  db: Db,
  chains: ChainCache,
  token: Decoded,
  organizationId: string,
  scope: CredentialScope,
  now: number,
  rider: Rider<T>,
): Promise<Resolution<T>> {
  const keys = await verifyingKeys(db, "SESSION_JWT");
  const digest = sha256(token.input);
  if (!keys.some((k) => verifyP256(k, digest, token.signature))) throw invalidSession("signature does not verify");
  const { claims } = token;
  if (claims.exp * 1000 <= now) throw invalidSession("the read-only session has expired");
  const found = await resolveHolder(
    db,
    organizationId,
    scope,
    () =>
      db
        .selectFrom("users")
        .innerJoin("organizations", "organizations.id", "users.organization_id")
        .select(["users.organization_id as organization_id", ...HOLDER_COLUMNS])
        .select(rider.columns(db))
        .where("users.id", "=", claims.user_id)
        .where("users.organization_id", "=", claims.organization_id)
        .execute(),
    chains,
    "a read-only session",
  );
  if (!found) throw invalidSession("its user no longer exists, or may not read this organization");
  const row = found.holder;
  const principal: Principal = {
    ...holderParts(row),
    organization: { id: found.organizationId },
    credential: {
      kind: KIND,
      id: claims.jti,
      type: "CREDENTIAL_TYPE_READ_ONLY_SESSION",
      expiresAt: claims.exp * 1000,
      ...(claims.allowlist_public_key ? { allowlistKey: claims.allowlist_public_key } : {}),
    },
    stamp: { publicKey: "", scheme: "X_SESSION", signature: "" },
    fromAncestor: found.fromAncestor,
  };
  return { principal, rider: rider.read(row) };
}

/** The 403 for a read-only session anywhere but a query. */
const readOnly = () =>
  permissionDenied(
    "request not authorized: a read-only session (X-Session) may only query; sign activities with a key, session key or passkey",
  );

export const readOnlySessions: StampStrategy = {
  header: "x-session",
  headerName: "X-Session",
  namedWhenMissing: false,
  credentialKind: KIND,
  rateLimitKey: kindAndId,
  // The list of the key whose request made it, if any; otherwise only the organization-wide rules.
  allowlistKey: (principal) => principal.credential.allowlistKey,
  signs: { activityTypes: [], queries: true, refusal: readOnly },
  async verify(value): Promise<VerifiedStamp> {
    const token = decode(value);
    return { resolve: (db, chains, organizationId, scope, now, rider) => resolve(db, chains, token, organizationId, scope, now, rider) };
  },
};

/** The token create_read_only_session returns: the session-JWT form (auth/tokens.ts), claims as above. */
export function signReadOnlySession(key: ServiceKey, claims: ReadOnlyClaims): string {
  const input = `${Buffer.from(JSON.stringify({ alg: "ES256", typ: "JWT" })).toString("base64url")}.${atobSafe({ ...claims })}`;
  // signP256 hashes once more: the signature is over SHA-256(SHA-256(input)), as for login JWTs.
  return `${input}.${signP256(key.signer, sha256(input), "raw").toString("base64url")}`;
}
