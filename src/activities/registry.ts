// Every activity the service accepts. Adding one = its file + one line here.
import type { CompiledActivity, SubmitRoute, VoteDefinition } from "./define.ts";
import { createSubOrganizationV7, createSubOrganizationV8 } from "./organizations/create_sub_organization.ts";
import { createUsersV3, createUsersV4 } from "./users/create_users.ts";
import { createApiOnlyUsers } from "./users/create_api_only_users.ts";
import { updateUser } from "./users/update_user.ts";
import { deleteUsers } from "./users/delete_users.ts";
import { createUserTag } from "./users/create_user_tag.ts";
import { deleteUserTags } from "./users/delete_user_tags.ts";
import { updateUserTag } from "./users/update_user_tag.ts";
import { createInvitations } from "./invitations/create_invitations.ts";
import { deleteInvitation } from "./invitations/delete_invitation.ts";
import { acceptInvitation } from "./invitations/accept_invitation.ts";
import { createApiKeysV1, createApiKeysV2 } from "./credentials/create_api_keys.ts";
import { deleteApiKeys } from "./credentials/delete_api_keys.ts";
import { createPolicies, createPolicyV3 } from "./policies/create_policy.ts";
import { updatePolicyV2 } from "./policies/update_policy.ts";
import { deletePoliciesActivity, deletePolicy } from "./policies/delete_policies.ts";
import { updateRootQuorum } from "./organizations/update_root_quorum.ts";
import { approveActivity, rejectActivity } from "./consensus/votes.ts";
import { createWebhookEndpoint } from "./webhooks/create_webhook_endpoint.ts";
import { updateWebhookEndpoint } from "./webhooks/update_webhook_endpoint.ts";
import { deleteWebhookEndpoint } from "./webhooks/delete_webhook_endpoint.ts";
import { redeliverWebhookDeliveries } from "./webhooks/redeliver_webhook_deliveries.ts";
// imports: sessions
import { stampLogin } from "./sessions/stamp_login.ts";
import { createSessionProfile } from "./sessions/create_session_profile.ts";
import { createReadWriteSessionV2 } from "./sessions/create_read_write_session.ts";
import { createReadOnlySession } from "./sessions/create_read_only_session.ts";
// imports: otp
import { initOtpV1, initOtpV2, initOtpV3 } from "./otp/init_otp.ts";
import { verifyOtpV1, verifyOtpV2 } from "./otp/verify_otp.ts";
import { otpLoginV1, otpLoginV2 } from "./otp/otp_login.ts";
// imports: passkeys
import { createAuthenticatorsV2 } from "./authenticators/create_authenticators.ts";
import { deleteAuthenticators } from "./authenticators/delete_authenticators.ts";
import { recoverUser } from "./authenticators/recover_user.ts";
// imports: recovery and contacts
// imports: legacy logins (docs/logins.md §9)
import { emailAuthV3 } from "./otp/email_auth.ts";
import { initOtpAuthV3 } from "./otp/init_otp_auth.ts";
import { otpAuth } from "./otp/otp_auth.ts";
import { oauth } from "./oauth/oauth.ts";
import { initUserEmailRecoveryV2 } from "./authenticators/init_user_email_recovery.ts";
// imports: ip-allowlist
import { setIpAllowlist } from "./ip-allowlist/set_ip_allowlist.ts";
import { removeIpAllowlist } from "./ip-allowlist/remove_ip_allowlist.ts";
// imports: wallets
import { createWalletActivity } from "./wallets/create_wallet.ts";
import { createWalletAccounts } from "./wallets/create_wallet_accounts.ts";
import { updateWallet } from "./wallets/update_wallet.ts";
import { deleteWallets } from "./wallets/delete_wallets.ts";
import { exportWallet } from "./wallets/export_wallet.ts";
import { exportWalletAccount } from "./wallets/export_wallet_account.ts";
import { initImportWallet } from "./wallets/init_import_wallet.ts";
import { importWallet } from "./wallets/import_wallet.ts";
import { exportPrivateKey } from "./private-keys/export_private_key.ts";
import { initImportPrivateKey } from "./private-keys/init_import_private_key.ts";
import { importPrivateKey } from "./private-keys/import_private_key.ts";
import { updateUserEmail } from "./users/update_user_email.ts";
import { updateUserPhoneNumber } from "./users/update_user_phone_number.ts";
import { updateUserName } from "./users/update_user_name.ts";
// imports: oauth2 credentials and oauth2_authenticate
import { createOauth2Credential } from "./oauth2/create_oauth2_credential.ts";
import { updateOauth2Credential } from "./oauth2/update_oauth2_credential.ts";
import { deleteOauth2Credential } from "./oauth2/delete_oauth2_credential.ts";
import { oauth2Authenticate } from "./oauth2/oauth2_authenticate.ts";
// imports: oauth providers and oauth_login
import { oauthLogin } from "./oauth/oauth_login.ts";
import { createOauthProvidersV2 } from "./oauth/create_oauth_providers.ts";
import { deleteOauthProviders } from "./oauth/delete_oauth_providers.ts";
// imports: tvc
import { createTvcApp } from "./tvc/create_tvc_app.ts";
import { createTvcDeployment } from "./tvc/create_tvc_deployment.ts";
import { createTvcManifestApprovals } from "./tvc/create_tvc_manifest_approvals.ts";
import { setTvcAppLiveDeployment } from "./tvc/set_tvc_app_live_deployment.ts";
import { deleteTvcDeployment } from "./tvc/delete_tvc_deployment.ts";
import { deleteTvcAppAndDeployments } from "./tvc/delete_tvc_app_and_deployments.ts";
// imports: auth proxy
import { enableAuthProxy } from "./auth-proxy/enable_auth_proxy.ts";
import { updateAuthProxyConfig } from "./auth-proxy/update_auth_proxy_config.ts";
import { disableAuthProxy } from "./auth-proxy/disable_auth_proxy.ts";
// imports: signing and private keys
import { createMfaPolicy } from "./mfa/create_mfa_policy.ts";
import { updateMfaPolicy } from "./mfa/update_mfa_policy.ts";
import { deleteMfaPolicy } from "./mfa/delete_mfa_policy.ts";
import { signRawPayloadV2 } from "./signing/sign_raw_payload.ts";
import { signRawPayloads } from "./signing/sign_raw_payloads.ts";
import { signTransactionV2 } from "./signing/sign_transaction.ts";
import { createPrivateKeysV2 } from "./private-keys/create_private_keys.ts";
import { deletePrivateKeys } from "./private-keys/delete_private_keys.ts";
import { createPrivateKeyTag } from "./private-keys/create_private_key_tag.ts";
import { updatePrivateKeyTag } from "./private-keys/update_private_key_tag.ts";
import { deletePrivateKeyTags } from "./private-keys/delete_private_key_tags.ts";
import { deleteWalletAccounts } from "./wallets/delete_wallet_accounts.ts";
import { ORGANIZATION_LIFECYCLE_ACTIVITIES } from "./organizations/index.ts";

export const ACTIVITIES: readonly CompiledActivity[] = [
  createSubOrganizationV8,
  createSubOrganizationV7,
  createUsersV4,
  createUsersV3,
  createApiOnlyUsers,
  updateUser,
  deleteUsers,
  createUserTag,
  deleteUserTags,
  updateUserTag,
  createInvitations,
  deleteInvitation,
  acceptInvitation,
  createApiKeysV2,
  createApiKeysV1,
  deleteApiKeys,
  createPolicyV3,
  createPolicies,
  updatePolicyV2,
  deletePolicy,
  deletePoliciesActivity,
  updateRootQuorum,
  ...ORGANIZATION_LIFECYCLE_ACTIVITIES,
  createMfaPolicy,
  updateMfaPolicy,
  deleteMfaPolicy,
  createWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  redeliverWebhookDeliveries,
  // activities: sessions
  stampLogin,
  createSessionProfile,
  createReadWriteSessionV2,
  createReadOnlySession,
  // activities: otp
  initOtpV3,
  initOtpV2,
  initOtpV1,
  verifyOtpV2,
  verifyOtpV1,
  otpLoginV2,
  otpLoginV1,
  // activities: passkeys
  createAuthenticatorsV2,
  deleteAuthenticators,
  recoverUser,
  // activities: recovery and contacts
  // activities: legacy logins
  emailAuthV3,
  initOtpAuthV3,
  otpAuth,
  oauth,
  initUserEmailRecoveryV2,
  // activities: ip-allowlist
  setIpAllowlist,
  removeIpAllowlist,
  // activities: wallets
  createWalletActivity,
  createWalletAccounts,
  updateWallet,
  deleteWallets,
  exportWallet,
  exportWalletAccount,
  initImportWallet,
  importWallet,
  exportPrivateKey,
  initImportPrivateKey,
  importPrivateKey,
  updateUserEmail,
  updateUserPhoneNumber,
  updateUserName,
  // activities: oauth2 credentials and oauth2_authenticate
  createOauth2Credential,
  updateOauth2Credential,
  deleteOauth2Credential,
  oauth2Authenticate,
  // activities: oauth providers and oauth_login
  oauthLogin,
  createOauthProvidersV2,
  deleteOauthProviders,
  // activities: tvc
  createTvcApp,
  createTvcDeployment,
  createTvcManifestApprovals,
  setTvcAppLiveDeployment,
  deleteTvcDeployment,
  deleteTvcAppAndDeployments,
  // activities: auth proxy
  enableAuthProxy,
  updateAuthProxyConfig,
  disableAuthProxy,
  // activities: signing and private keys
  signRawPayloadV2,
  signRawPayloads,
  signTransactionV2,
  createPrivateKeysV2,
  deletePrivateKeys,
  createPrivateKeyTag,
  updatePrivateKeyTag,
  deletePrivateKeyTags,
  deleteWalletAccounts,
];

/** Votes on other activities: routed like activities, recorded on their target. */
export const VOTES: readonly VoteDefinition[] = [approveActivity, rejectActivity];

const byOp = new Map<string, Map<string, SubmitRoute>>();
const byType = new Map<string, CompiledActivity>();
for (const def of [...ACTIVITIES, ...VOTES]) {
  if (byOp.get(def.op)?.has(def.type) || byType.has(def.type)) throw new Error(`activity type ${def.type} registered twice`);
  if (def.route === "activity") byType.set(def.type, def);
  const types = byOp.get(def.op) ?? new Map<string, SubmitRoute>();
  types.set(def.type, def);
  byOp.set(def.op, types);
}

/** The definitions accepted at submit/<op>, keyed by activity type. */
export function activitiesAt(op: string): ReadonlyMap<string, SubmitRoute> | undefined {
  return byOp.get(op);
}

export function activityByType(type: string): CompiledActivity | undefined {
  return byType.get(type);
}
