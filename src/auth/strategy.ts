// The shape every authentication strategy has: one per stamp header (strategies.ts lists
// them). Authentication happens in two halves around the parsing of the body
// (docs/stamps.md §1.3):
//   verify  — the header is decoded and everything that needs no store is checked against
//             the raw bytes: for X-Stamp and X-Stamp-Attested the signature itself, with the
//             public key the stamp names; for X-Stamp-WebAuthn only the client data (the
//             challenge binds the body; origin, RP ID, user presence); for X-Session the
//             token's form (its signature and expiry need the service keys: resolve);
//   resolve — once the body's organizationId is known, the credential the stamp names is
//             found in the organizations the scope allows, and becomes the Principal; a
//             passkey's signature is checked here, with the key stored for it.
// So a malformed stamp, and a forged API-key or attested stamp, costs no parsing and no
// query; a forged passkey stamp with well-formed client data costs the parse and one look-up.
//
// Beyond those two halves a strategy declares everything the rest of the service needs to know
// about its stamp kind — the header (CORS, log redaction, error texts), its credential kind, its
// rate-limit key and IP-allowlist key, the routes it may sign — so that adding a stamp kind is
// its strategy file plus one line in auth/strategies.ts (docs/stamps.md §7).
import type { AliasedRawBuilder } from "kysely";
import type { ApiError } from "../errors.ts";
import type { Db, Executor } from "../store/schema.ts";
import type { ChainCache } from "../store/organizations.ts";
import type { CredentialScope } from "./credential-scope.ts";
import type { CredentialCache } from "./credential-cache.ts";
import type { CredentialKind, Principal } from "./principal.ts";
import type { LoginSettings } from "../logins/settings.ts";

/**
 * Columns a later step wants read in the same statement as the credential: on SQLite every
 * separate read waits for the connection the commit group holds, so a request costs as few
 * statements as it can (pipeline/snapshot.ts is the one rider). The expressions may refer to
 * `users.id` (the credential's user) and `organizations` (that user's organization): every
 * strategy's look-up joins both. The strategy knows nothing else about them.
 */
export interface Rider<T> {
  columns(db: Executor): readonly AliasedRawBuilder<unknown, string>[];
  read(row: Readonly<Record<string, unknown>>): T;
  /**
   * Its columns read nothing but the credential's own rows (the key, its user, the user's
   * organization: store/credential-watch.ts CREDENTIAL_SOURCES), so a remembered look-up may
   * carry them (auth/credential-cache.ts). Absent: the look-up is read every time.
   */
  memo?: boolean;
}

/** No extra columns (queries). */
export const NO_RIDER: Rider<undefined> = { columns: () => [], read: () => undefined, memo: true };

/** Remembered look-ups (service state), and when the request arrived (performance.now()). */
export interface Remembered {
  cache: CredentialCache;
  since: number;
}

export interface Resolution<T> {
  principal: Principal;
  /** What the rider read, from the row of the credential that was chosen. */
  rider: T;
}

export interface VerifiedStamp {
  /** `chains`: the store's organization-chain cache (service state). */
  resolve<T>(
    db: Db,
    chains: ChainCache,
    targetOrganizationId: string,
    scope: CredentialScope,
    now: number,
    rider: Rider<T>,
    /** Where the strategy may find its look-up remembered (only API-key stamps use it). */
    remembered?: Remembered,
  ): Promise<Resolution<T>>;
}

/**
 * The routes a stamp kind may sign: every one, or only some activity types and — when `queries`
 * is set — the queries, with the error that refuses the rest. Checked once the route is known (pipeline/validate.ts,
 * pipeline/query.ts): the strategy itself never reads the body (docs/stamps.md §1.3).
 */
export type SignableRoutes = "any" | { readonly activityTypes: readonly string[]; readonly queries?: boolean; refusal(): ApiError };

export interface StampStrategy {
  /**
   * The request header it reads, lower-case as node gives header names. Also what CORS allows
   * and what the logs redact (server/app.ts for network/cors.ts, cli/serve.ts): each must be unique.
   */
  header: string;
  /** The header as the docs and error messages spell it (e.g. X-Stamp-WebAuthn). */
  headerName: string;
  /**
   * Whether the SIGNATURE_MISSING message names this header. Upstream's wording names X-Stamp
   * and X-Stamp-WebAuthn only, and clients may match it (docs/stamps.md §1.1): a new kind says no.
   */
  namedWhenMissing: boolean;
  /** principal.credential.kind of every principal it resolves; unique among the strategies. */
  credentialKind: CredentialKind;
  /**
   * The per-credential rate-limit bucket of a principal it resolved (docs/network.md §3).
   * The key is shared between nodes (Redis), so it may not change for an existing kind.
   */
  rateLimitKey(principal: Principal): string;
  /**
   * The public key whose IP allowlist rules apply to a principal it resolved, or undefined when
   * only the organization-wide rules do (docs/sessions-and-network.md §1).
   */
  allowlistKey(principal: Principal): string | undefined;
  /** Which routes its stamp may sign (docs/stamps.md §4.4 for the one restricted kind). */
  signs: SignableRoutes;
  /**
   * Decodes the header and checks what it can against `rawBody` without the store: the
   * signature when the stamp carries its public key (X-Stamp, X-Stamp-Attested), the client
   * data of a passkey assertion (whose signature needs the stored key: resolve checks it).
   * Reads neither the parsed body nor the store. `logins`: the service's login settings
   * (passkeys: accepted origins and RP ID).
   */
  verify(value: string | string[], rawBody: Buffer, logins?: LoginSettings): Promise<VerifiedStamp>;
}

/** The rate-limit key every kind so far uses: its credential kind and the credential's id. */
export function kindAndId(principal: Principal): string {
  return `${principal.credential.kind}:${principal.credential.id}`;
}
