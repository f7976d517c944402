// Auth proxy test helpers (docs/auth-proxy.md): enabling it for an organization, a
// sub-organization's own root (refused), and the proxy key as a caller — read back the way the
// proxy gets it: the sealed row opened with the service's master key.
import assert from "node:assert/strict";
import { completed, type Creds, type Harness, type Json } from "./inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { p256FromPkcs8, privateScalar } from "../../src/crypto/p256.ts";
import { configOfOrganization, openProxyKey } from "../../src/store/auth-proxy-configs.ts";

export const ENABLE = ["enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY"] as const;
export const UPDATE = ["update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG"] as const;
export const DISABLE = ["disable_auth_proxy", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY"] as const;

export const enable = (h: Harness, as: Creds) => h.submit(...ENABLE, {}, { as });
export const update = (h: Harness, as: Creds, parameters: Json) => h.submit(...UPDATE, parameters, { as });
export const disable = (h: Harness, as: Creds) => h.submit(...DISABLE, {}, { as });
export const getConfig = (h: Harness, as: Creds) => h.query("get_auth_proxy_config", {}, { as });

/** A new top-level organization with its proxy enabled; returns the org's root and the proxy user id. */
export async function enabledOrg(h: Harness, name = "proxy-org"): Promise<{ org: Creds; userId: string; config: Json }> {
  const org = await h.newOrg(name);
  const { userId } = completed(await enable(h, org), "enableAuthProxyResult");
  const config = (await getConfig(h, org)).json.authProxyConfig as Json;
  return { org, userId, config };
}

/** The proxy key of the organization's configuration, as a caller (its user in its organization). */
export async function proxyCreds(h: Harness, organizationId: string): Promise<Creds> {
  const row = await configOfOrganization(h.service.store.db, organizationId);
  assert.ok(row, "the organization has a proxy configuration");
  const der = await openProxyKey(h.service.masterKey, row);
  const key = p256FromPkcs8(der);
  der.fill(0);
  assert.equal(key.publicCompressed, row.public_key);
  return { organizationId, userId: row.user_id, key: { publicKey: row.public_key, privateKey: privateScalar(key).toString("hex") } };
}

/** A sub-organization of `parent` (made by its root through the SDK) and that sub-organization's own root user. */
export async function subOrgRoot(h: Harness, parent: Creds): Promise<Creds> {
  const key = generateP256KeyPair();
  const sdk = await h.sdk(parent);
  const sub = await sdk.createSubOrganization({
    subOrganizationName: `sub-${Math.random().toString(36).slice(2, 8)}`,
    rootQuorumThreshold: 1,
    rootUsers: [
      {
        userName: "sub-root",
        apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
        authenticators: [],
        oauthProviders: [],
      },
    ],
  });
  return { organizationId: sub.subOrganizationId, userId: sub.rootUserIds![0]!, key };
}

/** Activities of the caller's organization whose type matches. */
export async function activitiesOf(h: Harness, as: Creds, type: RegExp): Promise<Json[]> {
  const acts = (await h.query("list_activities", { paginationOptions: { limit: "100" } }, { as })).json.activities as Json[];
  return acts.filter((a) => type.test(a.type));
}
