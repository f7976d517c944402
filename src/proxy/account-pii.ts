// A config's verificationTokenRequiredForGetAccountPii (docs/auth-proxy-service.md §2.2):
// an EMAIL or PHONE_NUMBER look-up must prove the contact. A verification token proves it when
// a VERIFICATION_TOKEN key the API publishes signed it, it has not expired, it was issued in the
// config's organization and names that contact. An OIDC token proves an email when its `email`
// claim is that address, its provider says so (`email_verified` true) and the API accepts the
// token (it verifies it in full for an OIDC_TOKEN look-up).
import { permissionDenied } from "../errors.ts";
import { readVerificationToken } from "../auth/tokens.ts";
import { sameContact, type AccountLookup } from "./account-filters.ts";
import type { ApiClient } from "./api-client.ts";

const KEYS_TTL_MS = 60_000;
/** A forced refresh (a token signed by an unknown key) reuses keys at most this old. */
const REFRESH_AFTER_MS = 5_000;

/**
 * The API's VERIFICATION_TOKEN public keys, kept a minute (a rotated key is published before
 * it signs). Forged tokens cannot make every request fetch: a forced refresh reuses keys
 * fetched in the last few seconds, and concurrent fetches share one.
 */
export class VerificationKeys {
  #cached: { at: number; keys: string[] } | undefined;
  #inFlight: Promise<string[]> | undefined;
  constructor(private readonly api: ApiClient) {}

  async get(refresh = false): Promise<string[]> {
    const age = this.#cached ? Date.now() - this.#cached.at : Infinity;
    if (age < (refresh ? REFRESH_AFTER_MS : KEYS_TTL_MS)) return this.#cached!.keys;
    this.#inFlight ??= this.api
      .discoveryKeys()
      .then((all) => {
        const keys = all.filter((k) => k.purpose === "VERIFICATION_TOKEN").map((k) => k.publicKey);
        this.#cached = { at: Date.now(), keys };
        return keys;
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }
}

/** Throws 403 unless the verification token proves the look-up's contact. */
export async function requireVerifiedContact(
  keys: VerificationKeys,
  token: string,
  contact: NonNullable<AccountLookup["contact"]>,
  organizationId: string,
): Promise<void> {
  let read = readVerificationToken(token, await keys.get(), Date.now());
  // A key rotated in since the last fetch: fetch once more.
  if ("problem" in read && read.problem === "invalid verification token signature")
    read = readVerificationToken(token, await keys.get(true), Date.now());
  if ("problem" in read) throw permissionDenied(`verificationToken: ${read.problem}`);
  const c = read.claims;
  if (c.organization_id !== organizationId) throw permissionDenied("verificationToken was not issued by this auth proxy's organization");
  if (c.verification_type !== contact.type || !sameContact(contact.type, c.contact, contact.value)) {
    throw permissionDenied("verificationToken does not verify this contact");
  }
}

/** The `email` claim of an OIDC token when `email_verified` is true (the token itself unverified: the API verifies it). */
export function oidcEmail(token: string): string | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const p = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as { email?: unknown; email_verified?: unknown };
    if (typeof p.email !== "string") return undefined;
    // Only a provider that says it verified the address proves it: without email_verified, an
    // email is whatever the account holder typed (docs/auth-proxy-service.md §2.2). True as the
    // API reads it (a boolean, or the string some providers send).
    if (p.email_verified !== true && p.email_verified !== "true") return undefined;
    return p.email;
  } catch {
    return undefined;
  }
}
