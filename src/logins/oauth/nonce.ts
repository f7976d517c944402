// Nonce binding (docs/oauth.md §4.3): an OIDC token logs in only the key it was requested for.
// The client puts nonce = lowercase hex(SHA-256(UTF-8 of the public key's hex TEXT)) into its
// authorization request — a hash of the text, not of the key's bytes — and the provider
// echoes it in `nonce`, or in `tknonce` where a provider cannot set `nonce`. Checked at every
// login (oauth_login, the attested OIDC stamp), Sigil-issued X and Discord tokens included;
// never at registration (create_oauth_providers, sign-up, list_suborgs).
import { createHash, timingSafeEqual } from "node:crypto";
import type { OidcIdentity } from "./verify-oidc.ts";

/** The nonce a client derives from its session key (`publicKey` as the hex it sends). */
export function nonceFor(publicKeyHex: string): string {
  return createHash("sha256").update(publicKeyHex, "utf8").digest("hex");
}

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Whether the token's nonce (or tknonce) commits to `publicKeyHex`. The hex is hashed as
 * given and, when that differs, as lower case (clients derive the nonce from lower-case hex;
 * a request that upper-cases the key it sends still means the same key).
 */
export function nonceMatches(identity: Pick<OidcIdentity, "nonce" | "tknonce">, publicKeyHex: string): boolean {
  const expected = new Set([nonceFor(publicKeyHex), nonceFor(publicKeyHex.toLowerCase())]);
  const given = [identity.nonce, identity.tknonce].filter((v): v is string => typeof v === "string").map((v) => v.toLowerCase());
  return given.some((g) => [...expected].some((e) => same(g, e)));
}

/** Why a login's token does not bind `publicKeyHex`, or undefined when it does. */
export function nonceProblem(identity: Pick<OidcIdentity, "nonce" | "tknonce">, publicKeyHex: string): string | undefined {
  if (identity.nonce === undefined && identity.tknonce === undefined)
    return "the token has no nonce (or tknonce) claim; a login token must commit to the session key";
  if (!nonceMatches(identity, publicKeyHex))
    return "nonce mismatch: the token's nonce (or tknonce) is not sha256hex of the given publicKey";
  return undefined;
}
