// What the service remembers about one store's data between requests: caches of database
// rows, each keyed by what the store alone knows (organization ids, policy and webhook
// versions, the stored keys). Created once per store (openService, buildApp, startDispatcher
// and the CLI get it from there) and passed through the dependencies — never a module global,
// so two stores in one process (tests, tools) never answer from each other's data.
import { ChainCache, organizationChain } from "./store/organizations.ts";
import { GovernanceCache } from "./governance/cache.ts";
import { ListenerCache } from "./webhooks/outbox.ts";
import { AppProofKeyCache } from "./app-proofs/proofs.ts";
import { SigningKeyCache } from "./webhooks/signing-keys.ts";
import { ServiceKeyCache } from "./auth/service-keys.ts";
import { AllowlistCache } from "./network/allowlist-cache.ts";
import { TvcObservations } from "./tvc/observed.ts";
import { SignerCache } from "./signing/signer-cache.ts";
import { CredentialCache } from "./auth/credential-cache.ts";
import { NO_WATCH, type CredentialWatch } from "./store/credential-watch.ts";

export interface ServiceState {
  /** Organization → its chain of ancestors (parents never change). */
  readonly chains: ChainCache;
  /** Organization → compiled policies and root quorum, per policy version. */
  readonly governance: GovernanceCache;
  /** Organizations owning active webhook endpoints, per webhook version. */
  readonly listeners: ListenerCache;
  /** The app-proof signing key, opened. */
  readonly appProofKey: AppProofKeyCache;
  /** The active webhook signing key, opened. */
  readonly signingKey: SigningKeyCache;
  /** The service P-256 keys (sessions, OTP bundles, verification tokens), opened. */
  readonly serviceKeys: ServiceKeyCache;
  /** Root organization → its compiled IP allowlists, per allowlist version. */
  readonly allowlists: AllowlistCache;
  /** What the TVC runtime of this process last observed, per deployment. */
  readonly tvc: TvcObservations;
  /** (organization, signWith) → the key it names, per version of the organization's keys. */
  readonly signers: SignerCache;
  /** Public key → what the API-key look-up found, per credential epoch of the store (docs/storage.md §3.1). */
  readonly credentials: CredentialCache;
}

/** `watch`: the store's credential epoch (Store.credentialWatch); without one, every look-up is read. */
export function newServiceState(watch: CredentialWatch = NO_WATCH): ServiceState {
  const chains = new ChainCache();
  return {
    chains,
    governance: new GovernanceCache(),
    listeners: new ListenerCache(undefined, (db, id) => organizationChain(db, id, chains)),
    appProofKey: new AppProofKeyCache(),
    signingKey: new SigningKeyCache(),
    serviceKeys: new ServiceKeyCache(),
    allowlists: new AllowlistCache(),
    tvc: new TvcObservations(),
    signers: new SignerCache(),
    credentials: new CredentialCache(watch),
  };
}
