// Who a request acts as, whichever kind of stamp signed it: every authentication strategy
// (auth/strategies.ts) yields one Principal, and the pipeline steps after authentication
// read nothing else about the caller.
import type { UserRow } from "../store/users.ts";
import type { CredentialType } from "../store/schema.ts";

/** Who is acting: the user whose credential signed the request, and where that user lives. */
export interface Actor {
  userId: string;
  userName: string;
  /** The user's organization: the target organization or one of its ancestors. */
  organizationId: string;
  organizationName: string;
  /**
   * Set when an attested stamp (X-Stamp-Attested, attested-stamp.ts) signed the request:
   * the id of the verification token it presented, whose login use stamp_login consumes.
   */
  attestedTokenId?: string;
  /**
   * The public key of the submitter's stamp (an API or session key; a passkey's COSE key),
   * when the activity runs at submission. An activity executed later on an approval has it in
   * the submitter's vote instead (stampKeyOf, activities/verification-tokens.ts).
   */
  stampPublicKey?: string;
}

/** The organization a request targets. Its existence is established by authentication. */
export interface TargetOrganization {
  id: string;
}

/**
 * The kind of credential a stamp was verified with: the `credentialKind` its strategy declares
 * (auth/strategies.ts lists the strategies; no two share a kind). Code that treats kinds
 * differently asks the strategy (strategyOf), never compares kinds (docs/stamps.md §7).
 */
export type CredentialKind = string;

/** What the vote record keeps of the stamp (votes list the key, scheme and signature). */
export interface StampFacts {
  publicKey: string;
  scheme: string;
  signature: string;
}

export interface Principal {
  /** The acting user as handlers see it: the user and the organization it belongs to. */
  actor: Actor;
  /** The acting user's row, read with the credential (activity views reuse it). */
  user: UserRow;
  /**
   * The organization the request acts on: the target, or the holder's own when the credential
   * was found below the target (docs/stamps.md §5.2); found to exist while resolving it.
   */
  organization: TargetOrganization;
  /** The credential that signed: the one behind the submitter's vote. */
  credential: {
    kind: CredentialKind;
    id: string;
    /** As stored (e.g. CREDENTIAL_TYPE_API_KEY_P256); the policy keyword `credentials` reads it. */
    type: CredentialType;
    /** Epoch ms, or null when it never expires. */
    expiresAt: number | null;
    /**
     * A session key made by a login stamped with an API key of its organization: that key's
     * lower-case public key, whose IP allowlist the session is bound to
     * (docs/sessions-and-network.md §1).
     */
    allowlistKey?: string;
    /**
     * The key of an enabled auth proxy (docs/auth-proxy.md §3): it may sign only what the
     * proxy forwards (auth-proxy/scope.ts) and is not subject to the IP allowlist.
     */
    authProxy?: true;
    /**
     * A session key issued with a session profile: the profile whose scope every activity and
     * vote it submits must satisfy (auth/session-scope.ts, docs/sessions-and-network.md §6.3).
     */
    sessionProfileId?: string;
  };
  stamp: StampFacts;
  /**
   * The credential was found in an ancestor of the target organization, not in the target
   * itself: a parent acting on its sub-organization (it may read, not write —
   * docs/request-path.md §5).
   */
  fromAncestor: boolean;
}
