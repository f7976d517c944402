// The shape every authentication strategy has: one per stamp header (strategies.ts lists
// them). Authentication happens in two halves around the parsing of the body, so that a
// forged or malformed stamp costs no parsing and no query:
//   verify  — the header is decoded and its signature checked over the raw bytes;
//   resolve — once the body's organizationId is known, the credential the stamp names is
//             found in the organizations the scope allows, and becomes the Principal.
import type { AliasedRawBuilder } from "kysely";
import type { Db, Executor } from "../store/schema.ts";
import type { ChainCache } from "../store/organizations.ts";
import type { CredentialScope } from "./credential-scope.ts";
import type { Principal } from "./principal.ts";
import type { LoginSettings } from "./login-settings.ts";

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
}

/** No extra columns (queries). */
export const NO_RIDER: Rider<undefined> = { columns: () => [], read: () => undefined };

export interface Resolution<T> {
  principal: Principal;
  /** What the rider read, from the row of the credential that was chosen. */
  rider: T;
}

export interface VerifiedStamp {
  /** `chains`: the store's organization-chain cache (service state). */
  resolve<T>(db: Db, chains: ChainCache, targetOrganizationId: string, scope: CredentialScope, now: number, rider: Rider<T>): Promise<Resolution<T>>;
}

export interface StampStrategy {
  /** The request header it reads, lower-case as node gives header names. */
  header: string;
  /**
   * Decodes the header and checks its signature over `rawBody`; reads neither the body nor the
   * store. `logins`: the service's login settings (passkeys: accepted origins and RP ID).
   */
  verify(value: string | string[], rawBody: Buffer, logins?: LoginSettings): Promise<VerifiedStamp>;
}
