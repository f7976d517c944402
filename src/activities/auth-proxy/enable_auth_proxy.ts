// enable_auth_proxy (docs/auth-proxy.md §2, §3): the organization's proxy configuration, its
// proxy user, key and policies, all in this activity's transaction. Enabling an enabled
// configuration changes nothing and answers the same user; re-enabling a disabled one keeps
// its id and key (and puts back a proxy user, key or policy a root user deleted meanwhile).
import { Type } from "@sinclair/typebox";
import { lockOrganization } from "../../store/locks.ts";
import { configOfOrganization, sealProxyKey, settingsOf } from "../../store/auth-proxy-configs.ts";
import { newId } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { AUTH_PROXY_SCOPE, authProxyFacts } from "./gate.ts";
import { requireSenderDomains } from "../otp/otp-content.ts";
import { deleteProxyPolicies, ensureProxyUser, insertProxyPolicies, insertProxyUser, missingPolicies, newProxyKey } from "./proxy-user.ts";

async function execute(ctx: ExecuteContext) {
  const { tx, now } = ctx;
  const org = ctx.organization.id;
  // One configuration per organization: concurrent enables queue here (PostgreSQL); the
  // unique organization_id holds it regardless.
  await lockOrganization(tx, org);
  const existing = await configOfOrganization(tx, org);
  if (!existing) {
    const configId = newId();
    const { key, pkcs8 } = newProxyKey();
    try {
      const userId = await insertProxyUser(tx, org, key.publicCompressed, now);
      const policyIds = await insertProxyPolicies(tx, org, configId, userId, now);
      await tx
        .insertInto("auth_proxy_configs")
        .values({
          id: configId,
          organization_id: org,
          enabled: 1,
          user_id: userId,
          public_key: key.publicCompressed,
          private_key_sealed: await sealProxyKey(ctx.services.masterKey, configId, pkcs8),
          settings: "{}",
          policy_ids: JSON.stringify(policyIds),
          created_at: now,
          updated_at: now,
        })
        .execute();
      return { userId };
    } finally {
      pkcs8.fill(0);
    }
  }
  // A configuration written under other sender domains (the operator changed
  // SIGIL_MAIL_SENDER_DOMAINS or SIGIL_SMTP_FROM since) would fail every end user's email OTP:
  // refused before anything is written, naming the field as get_auth_proxy_config shows it;
  // update_auth_proxy_config works on a disabled configuration (docs/auth-proxy.md §2.2).
  const stored = settingsOf(existing);
  requireSenderDomains(ctx.services.logins, [
    ["authProxyConfig.sendFromEmailAddress", stored.sendFromEmailAddress],
    ["authProxyConfig.replyToEmailAddress", stored.replyToEmailAddress],
  ]);
  const user = await ensureProxyUser(tx, org, existing.user_id, existing.public_key, now);
  let policyIds = JSON.parse(existing.policy_ids) as string[];
  const repairPolicies = user.changed && user.userId !== existing.user_id ? true : await missingPolicies(tx, org, policyIds);
  if (repairPolicies) {
    await deleteProxyPolicies(tx, org, policyIds);
    policyIds = await insertProxyPolicies(tx, org, existing.id, user.userId, now);
  }
  if (existing.enabled !== 1 || user.userId !== existing.user_id || repairPolicies) {
    await tx
      .updateTable("auth_proxy_configs")
      .set({ enabled: 1, user_id: user.userId, policy_ids: JSON.stringify(policyIds), updated_at: now })
      .where("id", "=", existing.id)
      .execute();
  }
  return { userId: user.userId };
}

export const enableAuthProxy = defineActivity({
  ...authProxyFacts("ACTIVITY_TYPE_ENABLE_AUTH_PROXY", "CREATE"),
  scope: AUTH_PROXY_SCOPE,
  summary:
    "Enable the auth proxy for this top-level organization: creates (once) its configuration, the proxy user, its P-256 API key (private key sealed, never returned) and the policies that confine it to the forwarded sign-up, OTP and OAuth activities.",
  params: Type.Object({}),
  returns: Type.Object({ userId: Type.String() }),
  execute,
});
