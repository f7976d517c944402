// disable_auth_proxy (docs/auth-proxy.md §2): the configuration stays (enabled = false), with
// its id, key, user and settings; the proxy refuses it, and the credential look-up refuses
// stamps of its key (auth/api-key-stamp.ts), so the key is unusable until it is re-enabled.
import { Type } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { lockOrganization } from "../../store/locks.ts";
import { configOfOrganization } from "../../store/auth-proxy-configs.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { AUTH_PROXY_SCOPE, authProxyFacts } from "./gate.ts";

async function execute(ctx: ExecuteContext) {
  await lockOrganization(ctx.tx, ctx.organization.id);
  const existing = await configOfOrganization(ctx.tx, ctx.organization.id);
  if (!existing) throw notFound(`organization ${ctx.organization.id} has no auth proxy configuration (enable_auth_proxy makes it)`);
  if (existing.enabled === 1) {
    await ctx.tx.updateTable("auth_proxy_configs").set({ enabled: 0, updated_at: ctx.now }).where("id", "=", existing.id).execute();
  }
  return {};
}

export const disableAuthProxy = defineActivity({
  ...authProxyFacts("ACTIVITY_TYPE_DISABLE_AUTH_PROXY", "DELETE"),
  scope: AUTH_PROXY_SCOPE,
  summary:
    "Disable the organization's auth proxy: the configuration, its id and key are kept for a later enable_auth_proxy; until then the proxy refuses it and its key is refused.",
  params: Type.Object({}),
  returns: Type.Object({}),
  execute,
});
