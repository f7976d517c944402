// The associated data each kind of sealed secret is bound to (docs/custody.md §2), written
// once: every site that seals or opens a value of a kind builds its AAD here, and
// src/crypto/sealed-columns.ts lists the stored columns with these same builders. The strings
// are what existing rows were sealed under: changing one leaves those rows unopenable.
// No imports: any module may use it without a cycle.

export const AAD = {
  /** A wallet's mnemonic (wallets.seed_sealed). */
  walletSeed: (walletId: string) => `wallet-seed:${walletId}`,
  /** An imported or created private key (private_keys.key_sealed). */
  privateKey: (privateKeyId: string) => `private-key:${privateKeyId}`,
  /** One of the service's own signing keys (service_keys.private_key_sealed). */
  serviceKey: (purpose: string, id: string) => `service-key:${purpose}:${id}`,
  /** The target key of an OTP, opened at verification (otps.target_private_key_sealed). */
  otpTarget: (otpId: string) => `otp-target:${otpId}`,
  /** The key an export bundle is imported to (import_targets.private_key_sealed). */
  importTarget: (id: string) => `import-target:${id}`,
  /** An OAuth 2.0 client secret (oauth2_credentials.client_secret_sealed). */
  oauth2ClientSecret: (id: string) => `oauth2-client-secret:${id}`,
  /** An auth proxy config's signing key (auth_proxy_configs.private_key_sealed). */
  authProxyKey: (configId: string) => `auth-proxy-key:${configId}`,
  /** A webhook signing key (webhook_signing_keys.private_key_sealed). */
  webhookSigningKey: (id: string) => `webhook-signing-key:${id}`,
  /** A secret activity parameter, by activity and its path under `parameters` (docs/activities.md §10.2). */
  secretParam: (activityId: string, path: string) => `activity-secret-param:${activityId}:${path}`,
  /** sigil_meta master_key_canary: proves the master key at start. */
  masterKeyCanary: "sigil:master-key-canary",
  /** sigil_meta master_key_root. */
  masterKeyRoot: "sigil:master-key-root",
  /** sigil_meta app_proof_key (sealed inside its JSON value). */
  appProofKey: "sigil:app-proof-key",
} as const;
