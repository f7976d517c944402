// update_auth_proxy_config (docs/auth-proxy.md §2): sets the fields it names and keeps the
// others (a named object field — emailCustomizationParams, smsCustomizationParams,
// walletKitSettings — replaces the stored one whole). Allowed on a disabled configuration too,
// so it can be prepared before re-enabling.
import { notFound } from "../../errors.ts";
import { lockOrganization } from "../../store/locks.ts";
import { configOfOrganization, settingsOf } from "../../store/auth-proxy-configs.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { Type } from "@sinclair/typebox";
import { AUTH_PROXY_SCOPE, authProxyFacts } from "./gate.ts";
import { checkUpdate, UpdateAuthProxyConfigParams, type UpdateAuthProxyConfig } from "./fields.ts";
import { requireSenderDomains } from "../otp/otp-content.ts";

async function execute(ctx: ExecuteContext, p: UpdateAuthProxyConfig) {
  const changes = checkUpdate(p);
  // The proxy sends these in every end user's init_otp, where an address outside the operator's
  // domains is a 400 the user cannot act on: refused here, to the backend (docs/auth-proxy.md §2.3).
  requireSenderDomains(ctx.services.logins, [
    ["parameters.sendFromEmailAddress", changes.sendFromEmailAddress],
    ["parameters.replyToEmailAddress", changes.replyToEmailAddress],
  ]);
  await lockOrganization(ctx.tx, ctx.organization.id);
  const existing = await configOfOrganization(ctx.tx, ctx.organization.id);
  if (!existing) throw notFound(`organization ${ctx.organization.id} has no auth proxy configuration; enable it first (enable_auth_proxy)`);
  const settings = { ...settingsOf(existing), ...changes };
  await ctx.tx
    .updateTable("auth_proxy_configs")
    .set({ settings: JSON.stringify(settings), updated_at: ctx.now })
    .where("id", "=", existing.id)
    .execute();
  return { configId: existing.id };
}

export const updateAuthProxyConfig = defineActivity({
  ...authProxyFacts("ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", "UPDATE"),
  scope: AUTH_PROXY_SCOPE,
  summary:
    "Change the organization's auth proxy settings (allowed origins, email and SMS customization, OTP, verification-token and session lifetimes, wallet kit settings, …). Fields not named keep their values.",
  params: UpdateAuthProxyConfigParams,
  returns: Type.Object({ configId: Type.String() }),
  check: (p) => void checkUpdate(p),
  execute,
});
