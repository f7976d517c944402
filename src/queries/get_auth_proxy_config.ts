// get_auth_proxy_config (docs/auth-proxy.md §2): the organization's configuration as
// AuthProxyConfigView (auth-proxy/channel.ts), disabled ones included. Never the private key.
import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { OrganizationId } from "../schemas/common.ts";
import { configOfOrganization, configView } from "../store/auth-proxy-configs.ts";
import { defineQuery } from "./define.ts";

export const getAuthProxyConfig = defineQuery({
  op: "get_auth_proxy_config",
  summary: "The organization's auth proxy configuration: id, enabled, proxy user and public key, settings. Never the private key.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ authProxyConfig: Type.Unknown() }),
  async run({ db, organization }) {
    const row = await configOfOrganization(db, organization.id);
    if (!row) throw notFound(`organization ${organization.id} has no auth proxy configuration`);
    return { authProxyConfig: configView(row) };
  },
});
