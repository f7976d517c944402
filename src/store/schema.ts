// Table types: the one source of truth Kysely checks every query against.
// Portable across SQLite and PostgreSQL: ids are text UUIDs, JSON is text, times are
// integer milliseconds since the epoch (bigint in PostgreSQL, read back as numbers).
import type { Kysely, Transaction } from "kysely";

// Column value domains: every column that holds one of a fixed set of strings is typed with its
// union here, and code that writes or compares it uses these types (a typo is a type error).

/**
 * activities.status: the API's ACTIVITY_STATUS_* enum (list_activities' filter is built from
 * this list; the service writes COMPLETED, FAILED, CONSENSUS_NEEDED and REJECTED).
 */
export const ACTIVITY_STATUSES = [
  "ACTIVITY_STATUS_CREATED",
  "ACTIVITY_STATUS_PENDING",
  "ACTIVITY_STATUS_COMPLETED",
  "ACTIVITY_STATUS_FAILED",
  "ACTIVITY_STATUS_CONSENSUS_NEEDED",
  "ACTIVITY_STATUS_REJECTED",
  "ACTIVITY_STATUS_AUTHENTICATORS_NEEDED",
] as const;
export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number];
/** votes.selection */
export type VoteSelection = "VOTE_SELECTION_APPROVED" | "VOTE_SELECTION_REJECTED";
/** policies.effect */
export type PolicyEffect = "EFFECT_ALLOW" | "EFFECT_DENY";
/** api_keys.curve */
export type ApiKeyCurve = "API_KEY_CURVE_P256" | "API_KEY_CURVE_SECP256K1" | "API_KEY_CURVE_ED25519";
/**
 * api_keys.credential_type and votes.credential_type. Session keys (every login flow) are
 * P-256 api_keys rows of type CREDENTIAL_TYPE_LOGIN; passkeys sign votes as
 * CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR.
 */
export type CredentialType =
  | "CREDENTIAL_TYPE_API_KEY_P256"
  | "CREDENTIAL_TYPE_API_KEY_SECP256K1"
  | "CREDENTIAL_TYPE_API_KEY_ED25519"
  | "CREDENTIAL_TYPE_LOGIN"
  | "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR"
  | "CREDENTIAL_TYPE_OTP_AUTH_KEY_P256"
  /** create_read_write_session's session keys (docs/sessions-and-network.md §7.1). */
  | "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256"
  /** A read-only session token (X-Session, docs/sessions-and-network.md §7.2): never stored, never votes. */
  | "CREDENTIAL_TYPE_READ_ONLY_SESSION";
/** service_keys.purpose: what a service P-256 key signs (published at /public/v1/discovery/keys). */
export type ServiceKeyPurpose =
  "SESSION_JWT" | "OTP_ENCRYPTION_TARGET" | "VERIFICATION_TOKEN" | "OAUTH2_CLIENT_SECRET" | "OIDC_TOKEN" | "BUNDLE_SIGNER";
/** otps.otp_type and verification_tokens.verification_type */
export type OtpType = "OTP_TYPE_EMAIL" | "OTP_TYPE_SMS";
/** otps.status: live (may be verified) | verified (used once) | burnt (3 wrong codes) | expired is read from expires_at. */
export type OtpStatus = "live" | "verified" | "burnt";
/** webhook_signing_keys.status: active (signs) | published (verifies only) | retired (no longer published). */
export type SigningKeyStatus = "active" | "published" | "retired";
/** webhook_events.event_type */
export type WebhookEventType = "ACTIVITY_UPDATES";
/** webhook_deliveries.status (the API shows them as WEBHOOK_DELIVERY_STATUS_*). */
export type DeliveryStatus = "pending" | "delivered" | "failed" | "cancelled";

export interface OrganizationsTable {
  id: string;
  name: string;
  parent_id: string | null;
  root_quorum_threshold: number;
  /** JSON object of per-organization settings (e.g. disableEmailAuth). */
  settings: string;
  /** Bumped with every change to the organization's policies or root quorum. */
  policy_version: number;
  /** Bumped with every change to the organization's IP allowlists (0: never had one). */
  ip_allowlist_version?: number;
  /** Moved by triggers with every write to the organization's signing keys (migration 024; docs/signing.md §5). */
  keys_version?: number | string;
  created_at: number;
  updated_at: number;
  /** Set by delete_sub_organization: the row stays for its activities, the organization is unknown (migration 019). */
  deleted_at?: number | null;
}

/** A feature an organization set (enabled 1, with its value) or removed (enabled 0); no row: the default (migration 019). */
export interface OrganizationFeaturesTable {
  organization_id: string;
  name: string;
  enabled: number;
  value: string;
  created_at: number;
  updated_at: number;
}

/** An IP allowlist: the organization's (public_key '') or one of its API keys'. */
export interface IpAllowlistsTable {
  organization_id: string;
  public_key: string;
  /** 0/1; only the organization-level list's matters. */
  enabled: number;
  on_evaluation_error: "ALLOW" | "DENY";
  created_at: number;
  updated_at: number;
}

export interface IpAllowlistRulesTable {
  organization_id: string;
  public_key: string;
  position: number;
  /** Normalised `<network>/<prefix>`. */
  cidr: string;
  label: string;
  created_at: number;
}

export interface RootQuorumMembersTable {
  organization_id: string;
  user_id: string;
}

export interface UsersTable {
  id: string;
  organization_id: string;
  name: string;
  email: string | null;
  /** Lower-cased email; unique per organization. */
  email_normalized: string | null;
  phone: string | null;
  created_at: number;
  updated_at: number;
  // Optional: rows written before migration 006 have them null.
  /**
   * When the email became verified, null if it is not (docs/login-lookups.md §1): proven by a
   * verification token presented by its key (sign-up, update_user_email), by a login naming
   * the user's own organization, by Google, or vouched for by the app's backend
   * (create_sub_organization in a top-level organization; migration 012 for older rows).
   * Only verified contacts resolve logins that search downward from an ancestor.
   */
  email_verified_at?: number | null;
  phone_verified_at?: number | null;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  user_id: string;
  name: string;
  /** Stored exactly as submitted (clients compare it as a string); looked up lower-cased. */
  public_key: string;
  public_key_normalized: string;
  curve: ApiKeyCurve;
  credential_type: CredentialType;
  expiration_seconds: string | null;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
  /** Session keys: the login's sessionProfileId (surfaces as credential.sessionProfileId). */
  session_profile_id?: string | null;
  /**
   * Session keys: the lower-case public key of the API key whose login made the session; its
   * IP allowlist is the session's (migration 015, docs/sessions-and-network.md).
   */
  allowlist_public_key?: string | null;
  /**
   * 1 when the app's backend registered the key (a top-level organization's own credential
   * creating the sub-organization), else 0 (migration 025, docs/login-lookups.md §3).
   */
  trusted?: number;
  /** When the key first stamped a request resolved to this row; null until then (migration 025). */
  proved_at?: number | null;
}

/** Passkeys (WebAuthn credentials) of users. */
export interface AuthenticatorsTable {
  id: string;
  organization_id: string;
  user_id: string;
  name: string;
  /** b64url of the raw credential id, exactly as submitted (core rebuilds allowCredentials from it). */
  credential_id: string;
  /** The same id re-encoded canonically (b64url, no padding): what stamps are looked up by. */
  credential_id_normalized: string;
  /** b64url of the COSE public key from the attestation. */
  public_key: string;
  /** Attestation statement format (e.g. "none", "packed"). */
  attestation_type: string;
  aaguid: string;
  /** JSON array of AUTHENTICATOR_TRANSPORT_*. */
  transports: string;
  /** The authenticator's signature counter as last seen (0 when it keeps none). */
  sign_count: number;
  created_at: number;
  updated_at: number;
}

/** Service P-256 keys: session JWTs, OTP target bundles, verification tokens. */
export interface ServiceKeysTable {
  id: string;
  purpose: ServiceKeyPurpose;
  /** Uncompressed P-256 public key, lower-case hex (the string clients compare). */
  public_key: string;
  /** PKCS#8 DER of the private key, sealed with the master key. */
  private_key_sealed: string;
  status: SigningKeyStatus;
  created_at: number;
  updated_at: number;
}

/** One-time passcodes. The code itself is never stored: only a keyed digest of it. */
export interface OtpsTable {
  id: string;
  organization_id: string;
  otp_type: OtpType;
  /** As given (email address or E.164 phone number). */
  contact: string;
  /** Lower-cased email / the phone number as given: what limits and look-ups use. */
  contact_normalized: string;
  /** HMAC-SHA256 (key derived from the master key) of the code, bound to the OTP id. */
  code_digest: string;
  /** The per-OTP HPKE private key (the bundle's targetPublic), sealed with the master key. */
  target_private_key_sealed: string;
  attempts: number;
  status: OtpStatus;
  user_identifier: string | null;
  expires_at: number;
  created_at: number;
  updated_at: number;
}

/**
 * Counting slots that make "at most N at once" limits hold under concurrency without
 * count-then-insert: a limit of N is N rows per scope, and taking one is a single
 * conditional upsert (free when `until` has passed). See store/slots.ts.
 */
/**
 * "At most N per window" counters (store/slots.ts): N numbered rows per scope; indexed by
 * (scope, slot) and (scope, until) (migration 013_otp_limits).
 */
export interface LimitSlotsTable {
  /** What is counted, e.g. `otp-guess:email:<address>` (docs/otp-limits-and-mail.md §4). */
  scope: string;
  slot: number;
  /** Epoch ms when the slot frees itself; 0 = free. */
  until: number;
  /** What holds it (e.g. an OTP id), so the holder can give it back early. */
  holder: string;
}

/** Verification tokens issued by verify_otp; each use is recorded (a sign-up once, a login once). */
export interface VerificationTokensTable {
  id: string;
  /** The organization that issued it (where verify_otp ran). */
  organization_id: string;
  otp_id: string;
  verification_type: OtpType;
  contact: string;
  /** Compressed P-256 hex the token is bound to (from the encrypted OTP bundle). */
  public_key: string;
  expires_at: number;
  signup_used_at: number | null;
  login_used_at: number | null;
  created_at: number;
}

/** HD wallets. The BIP-39 mnemonic is stored sealed with the master key, nothing else secret. */
export interface WalletsTable {
  id: string;
  organization_id: string;
  /** Unique per organization. */
  name: string;
  /** masterKey.seal(mnemonic, "wallet-seed:<id>"): account keys are derived from it on demand. */
  seed_sealed: string;
  mnemonic_length: number;
  /** 1 or 0 (portable booleans); always 0 until import/export exist. */
  imported: number;
  exported: number;
  created_at: number;
  updated_at: number;
}

/** What was derived from a wallet: one row per (path, address format). Private keys are never stored. */
export interface WalletAccountsTable {
  id: string;
  wallet_id: string;
  organization_id: string;
  curve: string;
  path_format: string;
  path: string;
  address_format: string;
  address: string;
  /** Compressed secp256k1 (33 bytes) or ed25519 (32 bytes) public key, lower-case hex. */
  public_key: string;
  name: string | null;
  created_at: number;
  updated_at: number;
}

/** A key of its own (docs/signing.md §3); the private key is stored only sealed. */
export interface PrivateKeysTable {
  id: string;
  organization_id: string;
  /** Unique per organization. */
  name: string;
  curve: string;
  /** Compressed secp256k1 (33 bytes) or ed25519 (32 bytes) public key, lower-case hex. */
  public_key: string;
  /** masterKey.seal(private key hex, "private-key:<id>"). */
  key_sealed: string;
  imported: number;
  exported: number;
  created_at: number;
  updated_at: number;
}

/** The addresses a private key was created with, in request order. */
export interface PrivateKeyAddressesTable {
  private_key_id: string;
  organization_id: string;
  position: number;
  format: string;
  address: string;
}

export interface PrivateKeyTagsTable {
  id: string;
  organization_id: string;
  name: string;
  created_at: number;
  updated_at: number;
}

export interface PrivateKeyTagMembersTable {
  tag_id: string;
  private_key_id: string;
}

export interface UserTagsTable {
  id: string;
  organization_id: string;
  name: string;
  created_at: number;
  updated_at: number;
}

export interface UserTagMembersTable {
  tag_id: string;
  user_id: string;
}

export interface ActivitiesTable {
  id: string;
  organization_id: string;
  type: string;
  status: ActivityStatus;
  /** sha256 of the raw request body; same body, same activity. */
  fingerprint: string;
  /** JSON: the validated parameters (the intent). */
  intent: string;
  /** JSON: the result object, or null until the activity completes. */
  result: string | null;
  /** JSON: `{code, message, details}` when the activity failed. */
  failure: string | null;
  /** The user whose stamp submitted the activity. */
  submitted_by: string;
  /** JSON array of app proofs; null when none were asked for. */
  app_proofs: string | null;
  created_at: number;
  updated_at: number;
}

export interface VotesTable {
  id: string;
  activity_id: string;
  user_id: string;
  /** Organization the voter belongs to (the target org or an ancestor). */
  user_organization_id: string;
  selection: VoteSelection;
  /** The raw signed message: the request body the voter stamped. */
  message: string;
  public_key: string;
  signature: string;
  scheme: string;
  /** The API key (or, later, authenticator/session) that signed the vote. */
  credential_id: string;
  credential_type: CredentialType;
  created_at: number;
}

export interface PoliciesTable {
  id: string;
  organization_id: string;
  name: string;
  effect: PolicyEffect;
  /** Expressions exactly as submitted; '' when absent. */
  condition: string;
  consensus: string;
  time: string;
  notes: string;
  created_at: number;
  updated_at: number;
}

export interface PolicyEvaluationsTable {
  id: string;
  activity_id: string;
  organization_id: string;
  vote_id: string;
  /** policy_sets.id of the policies evaluated. */
  policy_set_id: string;
  /** One outcome code per policy of the set, in order (see store/policies.ts OUTCOME_CODES). */
  outcomes: string;
  /** The final outcome of the pass. */
  outcome: string;
  created_at: number;
}

export interface PolicySetsTable {
  /** Hash of the ordered policy ids. */
  id: string;
  /** JSON array of policy ids. */
  policy_ids: string;
}

export interface WebhookSigningKeysTable {
  id: string;
  /** base64url of the 32-byte Ed25519 public key (the JWK `x`). */
  public_key: string;
  /** PKCS#8 DER of the private key, sealed with the master key. */
  private_key_sealed: string;
  status: SigningKeyStatus;
  created_at: number;
  updated_at: number;
}

export interface WebhookEndpointsTable {
  id: string;
  organization_id: string;
  url: string;
  name: string;
  /** 1 or 0 (portable boolean). */
  is_active: number;
  /** JSON: [{eventType, filtersJson?, isActive?}]. */
  subscriptions: string;
  created_at: number;
  updated_at: number;
  // Optional: the columns default to null, and rows written before they existed have them null.
  /** First failed attempt since the last success; null while healthy. */
  failing_since?: number | null;
  /** Set when the service disabled the endpoint (failing for too long). */
  disabled_reason?: string | null;
  disabled_at?: number | null;
}

export interface WebhookEventsTable {
  id: string;
  organization_id: string;
  event_type: WebhookEventType;
  activity_id: string;
  /** The exact body delivered. */
  payload: string;
  fanned_out: number;
  created_at: number;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  lease_until: number;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  /** attempts when the current retry schedule began (0, or at the last redelivery). */
  schedule_offset?: number;
}

export interface WebhookDeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  status: number | null;
  error: string | null;
}

export interface MetaTable {
  key: string;
  value: string;
}

/** OAuth 2.0 client credentials. The secret is sealed with the master key. */
export interface Oauth2CredentialsTable {
  id: string;
  organization_id: string;
  /** OAUTH2_PROVIDER_X | OAUTH2_PROVIDER_DISCORD | … (logins/oauth/providers.ts) */
  provider: string;
  client_id: string;
  /** The client secret, sealed with the master key (AAD binds it to the credential id). */
  client_secret_sealed: string;
  /** The envelope as the client sent it (encrypted to the OAUTH2_CLIENT_SECRET service key): what the record returns. */
  encrypted_client_secret: string;
  created_at: number;
  updated_at: number;
}

/** OIDC identities attached to users; (issuer, audience, subject) unique service-wide. */
export interface OauthProvidersTable {
  id: string;
  organization_id: string;
  user_id: string;
  provider_name: string;
  issuer: string;
  audience: string;
  subject: string;
  created_at: number;
  updated_at: number;
  /** 'OIDC_TOKEN' or 'OIDC_CLAIMS'; NULL before migration 014 (docs/oauth-identities.md). */
  vouched_by?: string | null;
}

/** TVC operators (P-256 keys that sign manifests / hold shares), per organization. */
export interface TvcOperatorsTable {
  id: string;
  organization_id: string;
  name: string;
  /** Compressed lower-case hex, whatever encoding was given (tvc/operator-keys.ts): unique per organization. */
  public_key: string;
  created_at: number;
  updated_at: number;
}

export interface TvcOperatorSetsTable {
  id: string;
  organization_id: string;
  name: string;
  threshold: number;
  /** sha256 hex over name, threshold and sorted member ids: identical sets are reused. */
  identity: string;
  created_at: number;
  updated_at: number;
}

export interface TvcOperatorSetMembersTable {
  set_id: string;
  operator_id: string;
  position: number;
}

export interface TvcAppsTable {
  id: string;
  organization_id: string;
  name: string;
  quorum_public_key: string;
  manifest_set_id: string;
  share_set_id: string;
  enable_egress: number;
  enable_debug_mode_deployments: number;
  live_deployment_id: string | null;
  /** Set by delete_tvc_app_and_deployments. */
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface TvcDeploymentsTable {
  id: string;
  organization_id: string;
  app_id: string;
  manifest_id: string;
  /** base64 of the manifest's exact bytes (what operators sign). */
  manifest: string;
  /** sha256 hex of those bytes. */
  manifest_digest: string;
  /** JSON: the deployment as requested (tvc/manifest.ts DeploymentSpec). */
  spec: string;
  replicas: number;
  /** Set when the manifest set's threshold of approvals was reached: desired to run from then on. */
  approved_at: number | null;
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface TvcManifestApprovalsTable {
  id: string;
  organization_id: string;
  deployment_id: string;
  manifest_id: string;
  operator_id: string;
  /** DER hex ECDSA P-256/SHA-256 over the manifest bytes. */
  signature: string;
  created_at: number;
}

/** Auth proxy configurations, one per top-level organization (docs/auth-proxy.md §2). */
export interface AuthProxyConfigsTable {
  id: string;
  organization_id: string;
  /** 0/1 */
  enabled: number;
  /** The proxy user (enable_auth_proxy made it). */
  user_id: string;
  /** The proxy key's compressed P-256 public key, lower-case hex (also in api_keys). */
  public_key: string;
  /** PKCS#8 DER of the proxy key, sealed with the master key (AAD `auth-proxy-key:<id>`). */
  private_key_sealed: string;
  /** JSON object: the update_auth_proxy_config fields set so far. */
  settings: string;
  /** JSON array of the ids of the policies that confine the proxy user (docs/auth-proxy.md §3). */
  policy_ids: string;
  created_at: number;
  updated_at: number;
}

/**
 * The encryption target of a pending import (init_import_wallet, docs/export-import.md §3):
 * at most one per (organization, user, kind); import_wallet reads it once and deletes it.
 */
export interface ImportTargetsTable {
  id: string;
  organization_id: string;
  user_id: string;
  /** What the target receives: "WALLET" (a mnemonic) or "PRIVATE_KEY" (a raw private key). */
  kind: string;
  /** Uncompressed P-256 public key, lower-case hex (the bundle's targetPublic). */
  public_key: string;
  /** PKCS#8 DER of the target's private key, sealed with the master key (`import-target:<id>`). */
  private_key_sealed: string;
  expires_at: number;
  created_at: number;
}

/** invitations.access_type (SDK enum v1AccessType). */
export type AccessType = "ACCESS_TYPE_WEB" | "ACCESS_TYPE_API" | "ACCESS_TYPE_ALL";
/** invitations.status (SDK enum v1InvitationStatus). */
export type InvitationStatus = "INVITATION_STATUS_CREATED" | "INVITATION_STATUS_ACCEPTED" | "INVITATION_STATUS_REVOKED";

export interface InvitationsTable {
  id: string;
  organization_id: string;
  /** The user who submitted create_invitations (the request's senderUserId, checked). */
  sender_user_id: string;
  receiver_user_name: string;
  /** As given; the mail goes there and the accepted user gets it as userEmail. */
  receiver_email: string;
  /** JSON array of user tag ids of the organization. */
  receiver_user_tags: string;
  access_type: AccessType;
  status: InvitationStatus;
  /** SHA-256 of the invitation id and token (hex); null once accepted or revoked. */
  token_digest: string | null;
  /** The user accept_invitation created. */
  accepted_user_id: string | null;
  expires_at: number;
  created_at: number;
  updated_at: number;
}

/** A user's MFA policy (migration 021, docs/mfa.md §1). `required`: JSON steps `[{ any: [{ type, id? }] }]`. */
export interface MfaPoliciesTable {
  id: string;
  organization_id: string;
  user_id: string;
  name: string;
  condition: string;
  required: string;
  /** The policy's `order`: lower is evaluated first. */
  position: number;
  notes: string;
  created_at: number;
  updated_at: number;
}

/** Session profiles (migration 020, docs/sessions-and-network.md §6): never updated or deleted. */
export interface SessionProfilesTable {
  id: string;
  /** The organization that made it: usable by logins of its users and of every organization below it. */
  organization_id: string;
  name: string;
  /** A policy-language condition, as submitted. */
  scope: string;
  /** The longest session it allows, whole seconds as a string; null: the login decides. */
  expiration_seconds: string | null;
  notes: string | null;
  created_at: number;
}

/** What a user owes an activity waiting for authenticators (docs/mfa.md §3). */
export interface MfaRequirementsTable {
  activity_id: string;
  user_id: string;
  organization_id: string;
  mfa_policy_id: string;
  /** JSON steps, as the policy had them when it matched. */
  required: string;
  /** JSON array, one entry per step: the method `{ type, id? }` that met it, or null. */
  satisfied: string;
  created_at: number;
  updated_at: number;
}

export interface Database {
  organizations: OrganizationsTable;
  root_quorum_members: RootQuorumMembersTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  authenticators: AuthenticatorsTable;
  service_keys: ServiceKeysTable;
  otps: OtpsTable;
  limit_slots: LimitSlotsTable;
  verification_tokens: VerificationTokensTable;
  wallets: WalletsTable;
  wallet_accounts: WalletAccountsTable;
  ip_allowlists: IpAllowlistsTable;
  ip_allowlist_rules: IpAllowlistRulesTable;
  user_tags: UserTagsTable;
  private_keys: PrivateKeysTable;
  private_key_addresses: PrivateKeyAddressesTable;
  private_key_tags: PrivateKeyTagsTable;
  private_key_tag_members: PrivateKeyTagMembersTable;
  user_tag_members: UserTagMembersTable;
  activities: ActivitiesTable;
  votes: VotesTable;
  policies: PoliciesTable;
  policy_evaluations: PolicyEvaluationsTable;
  policy_sets: PolicySetsTable;
  webhook_signing_keys: WebhookSigningKeysTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  oauth2_credentials: Oauth2CredentialsTable;
  oauth_providers: OauthProvidersTable;
  tvc_operators: TvcOperatorsTable;
  tvc_operator_sets: TvcOperatorSetsTable;
  tvc_operator_set_members: TvcOperatorSetMembersTable;
  tvc_apps: TvcAppsTable;
  tvc_deployments: TvcDeploymentsTable;
  tvc_manifest_approvals: TvcManifestApprovalsTable;
  sigil_meta: MetaTable;
  auth_proxy_configs: AuthProxyConfigsTable;
  import_targets: ImportTargetsTable;
  invitations: InvitationsTable;
  organization_features: OrganizationFeaturesTable;
  session_profiles: SessionProfilesTable;
  mfa_policies: MfaPoliciesTable;
  mfa_requirements: MfaRequirementsTable;
}

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Anything queries can run on: the database or an open transaction. */
export type Executor = Kysely<Database>;
