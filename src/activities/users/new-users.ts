// Creating users: shared by create_users and create_sub_organization.
import { alreadyExists, invalid } from "../../errors.ts";
import { insertUser } from "../../store/users.ts";
import type { Executor } from "../../store/schema.ts";
import { isUniqueViolation, newId } from "../../store/util.ts";
import { lockUserTags } from "../../store/locks.ts";
import { addApiKeys, type NewApiKey } from "../credentials/api-keys.ts";
import { addAuthenticators, verifyRegistrations } from "../authenticators/add-authenticators.ts";
import type { AuthenticatorParams, WebauthnSettings } from "../../logins/passkey/registration.ts";
import { attachIdentities } from "../../store/oauth-providers.ts";
import { markEmailVerifiedByGoogle, type PreparedIdentity } from "../oauth/provider-identities.ts";

export interface NewUser {
  userName: string;
  userEmail?: string;
  userPhoneNumber?: string;
  apiKeys: NewApiKey[];
  authenticators: AuthenticatorParams[];
  /** {providerName, oidcToken} as the request has them; verified beforehand into `oauth`. */
  oauthProviders: readonly unknown[];
  userTags?: string[];
}

/** Every API key the users bring, with its field (for refuseAncestorKeys). */
export function keysOfUsers(
  users: readonly { apiKeys: readonly { publicKey: string }[] }[],
  field: string,
): { publicKey: string; field: string }[] {
  return users.flatMap((u, i) => u.apiKeys.map((k, j) => ({ publicKey: k.publicKey, field: `${field}[${i}].apiKeys[${j}].publicKey` })));
}

export async function addUsers(
  tx: Executor,
  organizationId: string,
  users: readonly NewUser[],
  now: number,
  field: string,
  /** How passkeys are checked (the activity's login settings); required when a user brings authenticators. */
  webauthn?: WebauthnSettings,
  /**
   * The identities of each user's oauthProviders, verified by the activity's `prepare`
   * (activities/oauth/provider-identities.ts); required when a user brings providers.
   */
  oauth?: readonly (readonly PreparedIdentity[])[],
): Promise<string[]> {
  // Every passkey is verified before anything is written (no store involved).
  const passkeys = [];
  for (const [i, u] of users.entries()) {
    const at = `${field}[${i}]`;
    if (u.oauthProviders.length > 0 && oauth?.[i]?.length !== u.oauthProviders.length) {
      throw new Error(`addUsers: ${at}.oauthProviders must be verified (prepareUsersProviders) before the users are created`);
    }
    if (u.authenticators.length > 0 && !webauthn) throw new Error("addUsers: users with authenticators need the webauthn settings");
    passkeys.push(webauthn ? await verifyRegistrations(u.authenticators, webauthn, `${at}.authenticators`) : []);
  }
  const ids: string[] = [];
  for (const [i, u] of users.entries()) {
    const at = `${field}[${i}]`;
    const id = newId();
    try {
      await insertUser(tx, {
        id,
        organization_id: organizationId,
        name: u.userName,
        email: u.userEmail ?? null,
        email_normalized: u.userEmail?.toLowerCase() ?? null,
        phone: u.userPhoneNumber ?? null,
        created_at: now,
        updated_at: now,
      });
    } catch (err) {
      if (isUniqueViolation(err, "users"))
        throw alreadyExists(`${at}.userEmail: a user with this email already exists in the organization`);
      throw err;
    }
    await addApiKeys(tx, organizationId, id, u.apiKeys, now, `${at}.apiKeys`);
    await addAuthenticators(tx, organizationId, id, passkeys[i]!, now, `${at}.authenticators`);
    if (u.userTags?.length) await tagUser(tx, organizationId, id, u.userTags, `${at}.userTags`);
    const identities = oauth?.[i] ?? [];
    if (identities.length > 0) {
      await attachIdentities(tx, organizationId, id, identities, now, `${at}.oauthProviders`);
      await markEmailVerifiedByGoogle(tx, id, u.userEmail, identities, now);
    }
    ids.push(id);
  }
  return ids;
}

/**
 * The tags, deduplicated, once each is known to exist and locked shared until commit, so
 * delete_user_tags (which locks them exclusively) cannot remove one before it is applied.
 */
export async function requireUserTags(tx: Executor, organizationId: string, tagIds: readonly string[], field: string): Promise<string[]> {
  const unique = [...new Set(tagIds)];
  const have = new Set(await lockUserTags(tx, organizationId, unique, "shared"));
  if (have.size !== unique.length) {
    const missing = unique.filter((t) => !have.has(t));
    throw invalid(`${field}: no user tag with id ${missing.join(", ")} in this organization`, [
      { field, description: "must name user tags of the organization" },
    ]);
  }
  return unique;
}

export async function tagUser(tx: Executor, organizationId: string, userId: string, tagIds: readonly string[], field: string) {
  const unique = await requireUserTags(tx, organizationId, tagIds, field);
  await tx
    .insertInto("user_tag_members")
    .values(unique.map((tag_id) => ({ tag_id, user_id: userId })))
    .execute();
}
