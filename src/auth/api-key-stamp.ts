// X-Stamp: a request signed with an API key, as @turnkey/api-key-stamper makes it.
//
//   X-Stamp: base64url(JSON{ publicKey: hex, scheme: SIGNATURE_SCHEME_TK_API_*, signature: DER hex })
//
// The signature is checked with the public key the stamp names before anything else; the
// key is then looked up by public key and the holder credential-scope.ts picks (the nearest
// in the target's chain; below the target, the registration key-registrations.ts ranks first)
// is the principal, unless the key is of another curve than the stamp's scheme or has expired
// (docs/stamps.md §2). The first stamp that resolves to a row proves it (docs/login-lookups.md §3).
import { unauthenticated } from "../errors.ts";
import { publicKeyProblem, verifyPersonalSignSignature, verifySignature, type Curve } from "../crypto/public-keys.ts";
import { isExpired, isOnlyWayIn, markProved } from "../store/api-keys.ts";
import { precompiled } from "../store/precompiled.ts";
import type { Db } from "../store/schema.ts";
import type { ChainCache } from "../store/organizations.ts";
import { resolveHolder, type CredentialScope } from "./credential-scope.ts";
import { HOLDER_COLUMNS, holderParts } from "./holder.ts";
import type { Principal, StampFacts } from "./principal.ts";
import { chooseRegistration, needsSoleCheck } from "./key-registrations.ts";
import { DEFAULT_UNPROVED_KEY_WINDOW_MS } from "../logins/settings.ts";
import { kindAndId, type Remembered, type Resolution, type Rider, type StampStrategy, type VerifiedStamp } from "./strategy.ts";

/** principal.credential.kind of an API or session key; also the prefix of its rate-limit bucket. */
const KIND = "api_key";

/**
 * What a scheme signs: `body` is the curve's usual digest of the raw body (docs/stamps.md §2.3);
 * `personal_sign` is an Ethereum wallet's EIP-191 message signature over it (docs/stamps.md §2.5).
 */
type Digest = "body" | "personal_sign";

interface Scheme {
  curve: Curve;
  digest: Digest;
}

interface ApiKeyStamp extends StampFacts, Scheme {}

/** Keyed by the stamp's `scheme` (request data): a Map, so no name reaches Object.prototype. */
const SCHEMES = new Map<string, Scheme>([
  ["SIGNATURE_SCHEME_TK_API_P256", { curve: "API_KEY_CURVE_P256", digest: "body" }],
  ["SIGNATURE_SCHEME_TK_API_SECP256K1", { curve: "API_KEY_CURVE_SECP256K1", digest: "body" }],
  ["SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191", { curve: "API_KEY_CURVE_SECP256K1", digest: "personal_sign" }],
  ["SIGNATURE_SCHEME_TK_API_ED25519", { curve: "API_KEY_CURVE_ED25519", digest: "body" }],
]);

const MAX_STAMP_LENGTH = 8192;
const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

const malformed = (why: string) => unauthenticated("UNAUTHENTICATED", `malformed activity stamp: ${why}`);

function decode(value: string | string[]): ApiKeyStamp {
  if (Array.isArray(value)) throw unauthenticated("UNAUTHENTICATED", "exactly one X-Stamp header is allowed");
  if (!value || value.length > MAX_STAMP_LENGTH || !B64URL.test(value)) throw malformed("X-Stamp must be base64url");
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
  } catch {
    throw malformed("X-Stamp does not decode to JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw malformed("X-Stamp must be a JSON object");
  const { publicKey, scheme, signature } = parsed as Record<string, unknown>;
  if (typeof publicKey !== "string" || typeof scheme !== "string" || typeof signature !== "string") {
    throw malformed("publicKey, scheme and signature must be strings");
  }
  const known = SCHEMES.get(scheme);
  if (!known) throw malformed(`unsupported signature scheme ${JSON.stringify(scheme.slice(0, 64))}`);
  const { curve, digest } = known;
  const keyProblem = publicKeyProblem(curve, publicKey);
  if (keyProblem) throw malformed(`publicKey: ${keyProblem}`);
  if (!/^[0-9a-fA-F]+$/.test(signature) || signature.length % 2 !== 0 || signature.length > 300) {
    throw malformed("signature must be hex");
  }
  return { publicKey, scheme, curve, digest, signature };
}

/**
 * Every API key with this public key, with its user and organization name: the whole
 * principal in one read (whoami costs this query and nothing else), plus the rider's columns.
 */
function apiKeysByPublicKey(rider: Rider<unknown>) {
  return precompiled(["publicKey"], (db, v) =>
    db
      .selectFrom("api_keys")
      .innerJoin("users", "users.id", "api_keys.user_id")
      .innerJoin("organizations", "organizations.id", "api_keys.organization_id")
      // An auth proxy's key (docs/auth-proxy.md §3): refused while its proxy is disabled,
      // confined to the forwarded routes, exempt from the IP allowlist.
      .leftJoin("auth_proxy_configs", (j) =>
        j
          .onRef("auth_proxy_configs.user_id", "=", "api_keys.user_id")
          .onRef("auth_proxy_configs.public_key", "=", "api_keys.public_key_normalized"),
      )
      .select([
        "api_keys.id as id",
        "api_keys.organization_id as organization_id",
        "api_keys.curve as curve",
        "api_keys.expires_at as expires_at",
        "api_keys.credential_type as credential_type",
        "api_keys.allowlist_public_key as allowlist_public_key",
        "api_keys.session_profile_id as session_profile_id",
        "api_keys.created_at as registered_at",
        "api_keys.trusted as trusted",
        "api_keys.proved_at as proved_at",
        "auth_proxy_configs.enabled as auth_proxy_enabled",
        ...HOLDER_COLUMNS,
      ])
      .select(rider.columns(db))
      .where("api_keys.public_key_normalized", "=", v.publicKey),
  );
}

/** The look-up compiled once per rider (there are two: none, and the request snapshot). */
const lookUps = new Map<Rider<unknown>, ReturnType<typeof apiKeysByPublicKey>>();
function lookUpWith(rider: Rider<unknown>): ReturnType<typeof apiKeysByPublicKey> {
  let lookUp = lookUps.get(rider);
  if (!lookUp) lookUps.set(rider, (lookUp = apiKeysByPublicKey(rider)));
  return lookUp;
}

const ambiguousKey = () =>
  unauthenticated(
    "UNAUTHENTICATED",
    "this public key was registered in more than one sub-organization recently and none of them has used it yet: log in naming your own organization, or try again later",
  );

const unknownKey = () => unauthenticated("PUBLIC_KEY_NOT_FOUND", "could not find public key in organization or its parent organization");

async function resolve<T>(
  db: Db,
  chains: ChainCache,
  stamp: ApiKeyStamp,
  freshMs: number,
  organizationId: string,
  scope: CredentialScope,
  now: number,
  rider: Rider<T>,
  remembered: Remembered | undefined,
): Promise<Resolution<T>> {
  const publicKey = stamp.publicKey.toLowerCase();
  const read = () => lookUpWith(rider)(db, { publicKey });
  const found = await resolveHolder(
    db,
    organizationId,
    scope,
    // Remembered while no credential row changed (auth/credential-cache.ts), when the rider's
    // columns are the credential's own; everything below still runs on every request.
    remembered && rider.memo === true ? () => remembered.cache.rows(publicKey, remembered.since, read) : read,
    chains,
    "a public key",
    // create_api_keys and proxy sign-ups take any public key without proof of possession,
    // and a wallet's key is public: below the target only a registration the backend made,
    // one the key has used, one the key is the only way into, or a fresh one may be the one;
    // two fresh ones are refused rather than guessed (docs/login-lookups.md §3).
    async (below) => {
      // Whether the key is its organization's only way in matters only for rows nobody
      // vouched for and the key never used: read for those alone (a login below the parent).
      const ranked = await Promise.all(below.map(async (r) => (needsSoleCheck(r) ? { ...r, sole: await isOnlyWayIn(db, r) } : r)));
      const choice = chooseRegistration(ranked, now, freshMs);
      if (choice.kind === "ambiguous") throw ambiguousKey();
      return choice.kind === "one" ? [choice.registration] : [];
    },
  );
  if (!found) throw unknownKey();
  const key = found.holder;
  if (key.curve !== stamp.curve) {
    throw unauthenticated("SIGNATURE_INVALID", "stamp scheme does not match the curve of the registered api key");
  }
  if (isExpired(key, now)) {
    // core matches "Unauthenticated desc = expired api key publicKey" to log the user out.
    throw unauthenticated("API_KEY_EXPIRED", `rpc error: code = Unauthenticated desc = expired api key publicKey ${stamp.publicKey}`);
  }
  if (key.auth_proxy_enabled === 0) {
    throw unauthenticated(
      "UNAUTHENTICATED",
      `this key belongs to the auth proxy of organization ${key.organization_id}, which is disabled`,
    );
  }
  // The signature is verified and this row is the one it resolved to: its holder has the key.
  // One conditional write, the first time only (docs/login-lookups.md §3).
  if (!key.proved_at) await markProved(db, key.id, now);
  const principal: Principal = {
    ...holderParts(key),
    // The chain proved it exists (organizations are never re-parented); a holder found
    // below the target acts in its own organization.
    organization: { id: found.organizationId },
    credential: {
      kind: KIND,
      id: key.id,
      type: key.credential_type,
      expiresAt: key.expires_at,
      ...(key.allowlist_public_key ? { allowlistKey: key.allowlist_public_key } : {}),
      ...(key.auth_proxy_enabled === 1 ? { authProxy: true as const } : {}),
      ...(key.session_profile_id ? { sessionProfileId: key.session_profile_id } : {}),
    },
    stamp: { publicKey: stamp.publicKey, scheme: stamp.scheme, signature: stamp.signature },
    fromAncestor: found.fromAncestor,
  };
  return { principal, rider: rider.read(key) };
}

export const apiKeyStamps: StampStrategy = {
  header: "x-stamp",
  headerName: "X-Stamp",
  namedWhenMissing: true,
  credentialKind: KIND,
  rateLimitKey: kindAndId,
  /**
   * The key's own list, or for a session made by an API key of its organization, that key's:
   * a session is bound to the allowlist of the credential that created it, so it cannot carry
   * the key's power to an address the key may not use. Sessions of sessions inherit the
   * original key's (the creator's resolved key is stored) — docs/sessions-and-network.md §1.
   */
  allowlistKey: (principal) => principal.credential.allowlistKey ?? principal.stamp.publicKey.toLowerCase(),
  signs: "any",
  async verify(value, rawBody, logins): Promise<VerifiedStamp> {
    const stamp = decode(value);
    const valid =
      stamp.digest === "personal_sign"
        ? verifyPersonalSignSignature(stamp.publicKey, rawBody, stamp.signature)
        : await verifySignature(stamp.curve, stamp.publicKey, rawBody, stamp.signature);
    if (!valid) {
      throw unauthenticated("SIGNATURE_INVALID", "could not verify api key signature");
    }
    const freshMs = logins?.unprovedKeyWindowMs ?? DEFAULT_UNPROVED_KEY_WINDOW_MS;
    return {
      resolve: (db, chains, organizationId, scope, now, rider, remembered) =>
        resolve(db, chains, stamp, freshMs, organizationId, scope, now, rider, remembered),
    };
  },
};
