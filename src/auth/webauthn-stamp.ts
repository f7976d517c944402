// X-Stamp-WebAuthn: a request signed with a passkey, as @turnkey/webauthn-stamper makes it
// (docs/stamps.md §3).
//
//   X-Stamp-Webauthn: JSON{ authenticatorData, clientDataJson, credentialId, signature }   (plain JSON, b64url fields)
//
// verify (no store): the fields decode; clientData is a webauthn.get whose challenge is the
// ASCII hex SHA-256 of the exact body, from an accepted origin; the RP ID hash is that of the
// configured RP ID; the user was present. resolve: the credential id is looked up (one
// statement, joined with the user and organization, plus the rider's columns) in the
// organizations the scope allows; the signature is checked with the stored COSE key; the
// signature counter must move forward when the authenticator keeps one.
import { unauthenticated } from "../errors.ts";
import { advanceSignCount, AUTHENTICATOR_CREDENTIAL_TYPE } from "../store/authenticators.ts";
import { precompiled } from "../store/precompiled.ts";
import type { Db } from "../store/schema.ts";
import { organizationChain, type ChainCache } from "../store/organizations.ts";
import { featureValuesAlongChain } from "../store/organization-features.ts";
import { HOLDER_COLUMNS, holderParts } from "./holder.ts";
import { resolveHolder, type CredentialScope } from "./credential-scope.ts";
import { DEFAULT_LOGIN_SETTINGS, type LoginSettings } from "../logins/settings.ts";
import type { Principal } from "./principal.ts";
import { kindAndId, type Resolution, type Rider, type StampStrategy, type VerifiedStamp } from "./strategy.ts";
import {
  assertionSignatureValid,
  checkAssertion,
  clientDataOrigin,
  decodeAssertion,
  type Assertion,
  type AssertionProblem,
} from "../logins/passkey/assertion.ts";

/** Votes record this as the stamp's scheme (there is no SIGNATURE_SCHEME_* for passkeys in the API). */
export const WEBAUTHN_SCHEME = "SIGNATURE_SCHEME_WEBAUTHN";

/** principal.credential.kind of a passkey; also the prefix of its rate-limit bucket. */
const KIND = "authenticator";

const MAX_STAMP_LENGTH = 65536;

const malformed = (why: string) => unauthenticated("UNAUTHENTICATED", `could not extract webauthn stamp: ${why}`);
const badSignature = (why: string) => unauthenticated("SIGNATURE_INVALID", `could not verify WebAuthN signature: ${why}`);

function refusal(p: AssertionProblem) {
  return "malformed" in p ? malformed(p.malformed) : badSignature(p.invalid);
}

function decode(value: string | string[]): Assertion {
  if (Array.isArray(value)) throw unauthenticated("UNAUTHENTICATED", "exactly one X-Stamp-WebAuthn header is allowed");
  if (!value || value.length > MAX_STAMP_LENGTH) throw malformed("the header must be JSON");
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw malformed("the header must be JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw malformed("the header must be a JSON object");
  const a = decodeAssertion(parsed as Record<string, unknown>);
  if ("malformed" in a || "invalid" in a) throw refusal(a);
  return a;
}

/** Every authenticator with this credential id, with its user and organization, plus the rider's columns. */
function authenticatorsByCredentialId(rider: Rider<unknown>) {
  return precompiled(["credentialId"], (db, v) =>
    db
      .selectFrom("authenticators")
      .innerJoin("users", "users.id", "authenticators.user_id")
      .innerJoin("organizations", "organizations.id", "authenticators.organization_id")
      .select([
        "authenticators.id as id",
        "authenticators.organization_id as organization_id",
        "authenticators.public_key as public_key",
        "authenticators.sign_count as sign_count",
        "authenticators.created_at as registered_at",
        ...HOLDER_COLUMNS,
      ])
      .select(rider.columns(db))
      .where("authenticators.credential_id_normalized", "=", v.credentialId),
  );
}

type Passkey = Awaited<ReturnType<ReturnType<typeof authenticatorsByCredentialId>>>[number];

const lookUps = new Map<Rider<unknown>, ReturnType<typeof authenticatorsByCredentialId>>();
function lookUpWith(rider: Rider<unknown>): ReturnType<typeof authenticatorsByCredentialId> {
  let lookUp = lookUps.get(rider);
  if (!lookUp) lookUps.set(rider, (lookUp = authenticatorsByCredentialId(rider)));
  return lookUp;
}

async function resolve<T>(
  db: Db,
  chains: ChainCache,
  stamp: Assertion,
  header: string,
  organizationId: string,
  scope: CredentialScope,
  rider: Rider<T>,
): Promise<Resolution<T>> {
  // Below the target, a credential id is only what a tenant chose to register (registration
  // takes a client-chosen challenge, so anyone can register any id with a key of their own):
  // the passkey whose stored key verifies this assertion is the one, and another tenant's
  // copy of the id is ignored rather than a CREDENTIAL_CONFLICT (docs/login-lookups.md §3).
  // Oldest registration first: the real one was registered before anyone could learn its id,
  // so a normal login checks one signature; if several hold the same key, the oldest wins.
  let checked: Passkey | undefined;
  const verifying = async (below: Passkey[]): Promise<Passkey[]> => {
    const ordered = [...below].sort(
      (a, b) => Number(a.registered_at) - Number(b.registered_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
    for (const p of ordered) if (await assertionSignatureValid(stamp, p.public_key)) return [(checked = p)];
    // Registered below, but no key verifies: a forged stamp, refused as one.
    throw badSignature("the signature does not verify with the registered passkey");
  };
  const found = await resolveHolder(
    db,
    organizationId,
    scope,
    () => lookUpWith(rider)(db, { credentialId: stamp.credentialId }),
    chains,
    "a credential ID",
    verifying,
  );
  if (!found) throw unauthenticated("CREDENTIAL_NOT_FOUND", "credential ID could not be found in organization or its parent organization");
  const passkey = found.holder;
  if (passkey !== checked && !(await assertionSignatureValid(stamp, passkey.public_key)))
    throw badSignature("the signature does not verify with the registered passkey");
  const originProblem = await organizationOriginProblem(db, chains, passkey.organization_id, stamp);
  if (originProblem) throw badSignature(originProblem);
  // A counter that does not move forward means a replayed assertion or a cloned
  // authenticator. Authenticators that keep no counter always report 0 (and stay at 0).
  const stored = Number(passkey.sign_count);
  if (stored > 0 || stamp.signCount > 0) {
    if (stamp.signCount <= stored || !(await advanceSignCount(db, passkey.id, stamp.signCount))) {
      throw badSignature("the authenticator's signature counter did not increase (a replayed or cloned assertion)");
    }
  }
  const principal: Principal = {
    ...holderParts(passkey),
    organization: { id: found.organizationId },
    credential: { kind: KIND, id: passkey.id, type: AUTHENTICATOR_CREDENTIAL_TYPE, expiresAt: null },
    // The vote keeps the passkey's key and the whole stamp: with the message (the body) it is
    // everything needed to check the assertion again.
    stamp: { publicKey: passkey.public_key, scheme: WEBAUTHN_SCHEME, signature: header },
    fromAncestor: found.fromAncestor,
  };
  return { principal, rider: rider.read(passkey) };
}

/**
 * FEATURE_NAME_WEBAUTHN_ORIGINS (docs/organizations.md §8.3): each organization of the
 * passkey's chain that set it must list the assertion's origin, so a parent's list applies to
 * every sub-organization and a sub-organization can only narrow it. Checked after the
 * server-wide origins (checkAssertion), once the passkey's organization is known.
 */
async function organizationOriginProblem(
  db: Db,
  chains: ChainCache,
  organizationId: string,
  stamp: Assertion,
): Promise<string | undefined> {
  const lists = await featureValuesAlongChain(db, await organizationChain(db, organizationId, chains), "FEATURE_NAME_WEBAUTHN_ORIGINS");
  if (lists.length === 0) return undefined;
  const origin = clientDataOrigin(stamp);
  if (lists.every((list) => list.split(",").includes(origin))) return undefined;
  return `origin ${JSON.stringify(origin.slice(0, 200))} is not among the WebAuthn origins of the passkey's organization`;
}

export const webauthnStamps: StampStrategy = {
  header: "x-stamp-webauthn",
  headerName: "X-Stamp-WebAuthn",
  namedWhenMissing: true,
  credentialKind: KIND,
  rateLimitKey: kindAndId,
  // Passkeys have no key list of their own: only the organization's rules apply.
  allowlistKey: () => undefined,
  signs: "any",
  async verify(value, rawBody, logins?: LoginSettings): Promise<VerifiedStamp> {
    const stamp = decode(value);
    const problem = checkAssertion(stamp, rawBody, (logins ?? DEFAULT_LOGIN_SETTINGS).webauthn);
    if (problem) throw refusal(problem);
    const header = value as string;
    return {
      resolve: (db, chains, organizationId, scope, _now, rider) => resolve(db, chains, stamp, header, organizationId, scope, rider),
    };
  },
};
