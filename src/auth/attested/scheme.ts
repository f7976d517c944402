// What an attestation scheme of X-Stamp-Attested (auth/attested-stamp.ts) is: given the
// stamp, whose signature is already verified, the user the attestation names.
import type { Db } from "../../store/schema.ts";
import type { ChainCache } from "../../store/organizations.ts";
import type { Principal, StampFacts } from "../principal.ts";
import type { Rider } from "../strategy.ts";
import type { LoginSettings } from "../../logins/settings.ts";

export interface AttestedStamp extends StampFacts {
  /** The verification token or OIDC token (`publicKeyAttestation`). */
  attestation: string;
}

export interface Attested<T> {
  /** Who acts; credential and stamp are filled in by the strategy. */
  principal: Omit<Principal, "credential" | "stamp">;
  /** The attestation's id (a verification token's `id`): the credential id votes record. */
  credentialId: string;
  /** When the attestation expires, epoch ms. */
  expiresAt: number;
  rider: T;
}

export interface AttestationScheme {
  /** `logins`: the service's login settings (the OIDC scheme reads its trusted issuers). */
  resolve<T>(
    db: Db,
    chains: ChainCache,
    stamp: AttestedStamp,
    targetOrganizationId: string,
    now: number,
    rider: Rider<T>,
    logins?: LoginSettings,
  ): Promise<Attested<T>>;
}
