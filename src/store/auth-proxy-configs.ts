// Auth proxy configurations (docs/auth-proxy.md §2, §3): one row per top-level organization
// that ever enabled the proxy. The proxy key's private half exists only here, sealed with the
// master key under a row-binding AAD; the view handed to the API and the channel never
// carries it.
import type { AuthProxyConfigView } from "../auth-proxy/channel.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { AuthProxyConfigsTable, Executor } from "./schema.ts";
import { AAD } from "../crypto/aad.ts";

export type AuthProxyConfigRow = AuthProxyConfigsTable;

/** The fields of update_auth_proxy_config as stored in `settings` (SDK type v1UpdateAuthProxyConfigIntent). */
export type AuthProxySettings = Omit<
  AuthProxyConfigView,
  "configId" | "organizationId" | "enabled" | "userId" | "publicKey" | "allowedOrigins" | "createdAt" | "updatedAt"
> & {
  allowedOrigins?: string[];
};

const keyAad = AAD.authProxyKey;

export function sealProxyKey(master: MasterKey, configId: string, pkcs8: Buffer): Promise<string> {
  return master.seal(pkcs8, keyAad(configId));
}

/** The proxy key's PKCS#8 DER; the caller zeroes it after use. */
export function openProxyKey(master: MasterKey, row: Pick<AuthProxyConfigRow, "id" | "private_key_sealed">): Promise<Buffer> {
  return master.open(row.private_key_sealed, keyAad(row.id));
}

export async function configOfOrganization(db: Executor, organizationId: string): Promise<AuthProxyConfigRow | undefined> {
  return db.selectFrom("auth_proxy_configs").selectAll().where("organization_id", "=", organizationId).executeTakeFirst();
}

export async function findConfig(db: Executor, configId: string): Promise<AuthProxyConfigRow | undefined> {
  return db.selectFrom("auth_proxy_configs").selectAll().where("id", "=", configId).executeTakeFirst();
}

/** The settings of every enabled configuration (CORS admission, the origins route). */
export async function enabledSettings(db: Executor): Promise<AuthProxySettings[]> {
  const rows = await db.selectFrom("auth_proxy_configs").select("settings").where("enabled", "=", 1).execute();
  return rows.map((r) => settingsOf(r));
}

export function settingsOf(row: Pick<AuthProxyConfigRow, "settings">): AuthProxySettings {
  const parsed = JSON.parse(row.settings) as unknown;
  // Written by us as an object; anything else is treated as "nothing set".
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as AuthProxySettings) : {};
}

/** The record as get_auth_proxy_config and the channel return it (never the private key). */
export function configView(row: AuthProxyConfigRow): AuthProxyConfigView {
  const s = settingsOf(row);
  return {
    ...s,
    configId: row.id,
    organizationId: row.organization_id,
    enabled: row.enabled === 1,
    userId: row.user_id,
    publicKey: row.public_key,
    allowedOrigins: s.allowedOrigins ?? [],
    createdAt: new Date(Number(row.created_at)).toISOString(),
    updatedAt: new Date(Number(row.updated_at)).toISOString(),
  };
}

/**
 * True when the user is an auth proxy's user, or the key is a proxy key (enabled or not):
 * what such a credential signs is the browser's word, never the backend's
 * (docs/login-lookups.md §1).
 */
export async function isAuthProxyCredential(db: Executor, userId: string, publicKey: string | undefined): Promise<boolean> {
  let q = db.selectFrom("auth_proxy_configs").select("id").where("user_id", "=", userId);
  if (publicKey)
    q = db
      .selectFrom("auth_proxy_configs")
      .select("id")
      .where((eb) => eb.or([eb("user_id", "=", userId), eb("public_key", "=", publicKey.toLowerCase())]));
  return (await q.limit(1).executeTakeFirst()) !== undefined;
}
