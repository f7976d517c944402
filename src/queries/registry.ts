// Every query the service answers. Adding one = its file + one line here.
import type { CompiledQuery } from "./define.ts";
import { getActivity } from "./get_activity.ts";
import { listActivitiesQuery } from "./list_activities.ts";
import { whoami } from "./whoami.ts";
import { listSuborgs } from "./list_suborgs.ts";
import { getUser, listUsers } from "./users.ts";
import { listUserTags } from "./user_tags.ts";
import { getActivePolicies } from "./active_policies.ts";
import { listAppProofs } from "./app_proofs.ts";
import { getApiKey, getApiKeys } from "./api_keys.ts";
import { getPolicy, getPolicyEvaluations, listPolicies } from "./policies.ts";
import { listWebhookEndpoints } from "./webhooks.ts";
import { listWebhookDeliveries } from "./webhook_deliveries.ts";
// imports: passkeys
import { getAuthenticator, getAuthenticators } from "./authenticators.ts";
// imports: recovery and contacts
// imports: ip-allowlist
import { getIpAllowlist } from "./ip_allowlist.ts";
// imports: wallets
import { getWallet, getWalletAccount, listWalletAccounts, listWallets } from "./wallets.ts";
import { listVerifiedSuborgs } from "./list_verified_suborgs.ts";
// imports: oauth2 credentials
import { getOauth2Credential, listOauth2Credentials } from "./oauth2_credentials.ts";
// imports: oauth providers
import { getOauthProviders } from "./oauth_providers.ts";
// imports: tvc
import { getTvcApp, getTvcDeployment, listTvcAppDeployments, listTvcApps } from "./tvc.ts";
// imports: tvc status
import { getAppStatus } from "./app_status.ts";
// imports: auth proxy
import { getAuthProxyConfig } from "./get_auth_proxy_config.ts";
// imports: private keys
import { getMfaPolicies, getMfaPolicy, getMfaStatus } from "./mfa.ts";
import { getPrivateKey, listPrivateKeys, listPrivateKeyTags } from "./private_keys.ts";
import { getOrganization, getOrganizationConfigs } from "./organizations.ts";
import { getSessionProfile, getSessionProfiles } from "./session_profiles.ts";
import { checkPolicy } from "./check_policy.ts";
import { dryRunPolicies } from "./dry_run_policies.ts";
import { explainActivity } from "./explain_activity.ts";

export const QUERIES: readonly CompiledQuery[] = [
  getActivity,
  listActivitiesQuery,
  whoami,
  getMfaPolicy,
  getMfaPolicies,
  getMfaStatus,
  listSuborgs,
  getUser,
  listUsers,
  listUserTags,
  getActivePolicies,
  listAppProofs,
  getApiKey,
  getApiKeys,
  getPolicy,
  listPolicies,
  getPolicyEvaluations,
  listWebhookEndpoints,
  listWebhookDeliveries,
  // queries: passkeys
  getAuthenticator,
  getAuthenticators,
  // queries: recovery and contacts
  // queries: ip-allowlist
  getIpAllowlist,
  // queries: wallets
  getWallet,
  listWallets,
  getWalletAccount,
  listWalletAccounts,
  listVerifiedSuborgs,
  // queries: oauth2 credentials
  getOauth2Credential,
  listOauth2Credentials,
  // queries: oauth providers
  getOauthProviders,
  // queries: tvc
  listTvcApps,
  getTvcApp,
  listTvcAppDeployments,
  getTvcDeployment,
  // queries: tvc status
  getAppStatus,
  // queries: auth proxy
  getAuthProxyConfig,
  // queries: private keys
  getPrivateKey,
  listPrivateKeys,
  listPrivateKeyTags,
  getOrganization,
  getOrganizationConfigs,
  getSessionProfile,
  getSessionProfiles,
  checkPolicy,
  dryRunPolicies,
  explainActivity,
];

const byOp = new Map<string, CompiledQuery>();
for (const q of QUERIES) {
  if (byOp.has(q.op)) throw new Error(`query ${q.op} registered twice`);
  byOp.set(q.op, q);
}

export function queryAt(op: string): CompiledQuery | undefined {
  return byOp.get(op);
}
