// Registering passkeys for a user: shared by create_authenticators, recover_user,
// create_users and create_sub_organization, so every path applies the same checks and limits.
import { alreadyExists, exhausted, notFound } from "../../errors.ts";
import {
  verifyRegistration,
  type AuthenticatorParams,
  type RegisteredCredential,
  type WebauthnSettings,
} from "../../logins/passkey/registration.ts";
import { insertAuthenticators, MAX_AUTHENTICATORS_PER_USER, type AuthenticatorRow } from "../../store/authenticators.ts";
import { lockUsers } from "../../store/locks.ts";
import type { Executor } from "../../store/schema.ts";
import { isUniqueViolation, newId } from "../../store/util.ts";

/** Every registration verified (no store involved): the activity fails before it writes anything. */
export async function verifyRegistrations(
  params: readonly AuthenticatorParams[],
  settings: WebauthnSettings,
  field: string,
): Promise<RegisteredCredential[]> {
  const out: RegisteredCredential[] = [];
  for (const [i, p] of params.entries()) out.push(await verifyRegistration(p, settings, `${field}[${i}]`));
  const seen = new Set<string>();
  for (const [i, c] of out.entries()) {
    if (seen.has(c.credentialIdNormalized))
      throw alreadyExists(`${field}[${i}].attestation.credentialId: the same credential is registered twice in this request`);
    seen.add(c.credentialIdNormalized);
  }
  return out;
}

export async function addAuthenticators(
  tx: Executor,
  organizationId: string,
  userId: string,
  credentials: readonly RegisteredCredential[],
  now: number,
  field: string,
): Promise<string[]> {
  if (credentials.length === 0) return [];
  // The cap is a count-then-insert: the user's row lock makes this user's credential writers
  // (create_api_keys takes the same lock) queue on PostgreSQL; SQLite has one writer. The lock
  // also proves the user still exists (delete_users holds it while deleting).
  const [locked] = await lockUsers(tx, organizationId, [userId]);
  if (!locked) throw notFound(`no user ${userId} in organization ${organizationId}`);
  const existing = await tx.selectFrom("authenticators").select("id").where("user_id", "=", userId).execute();
  if (existing.length + credentials.length > MAX_AUTHENTICATORS_PER_USER) {
    throw exhausted(`user has exceeded maximum authenticators (${MAX_AUTHENTICATORS_PER_USER})`);
  }
  const rows: AuthenticatorRow[] = credentials.map((c) => ({
    id: newId(),
    organization_id: organizationId,
    user_id: userId,
    name: c.name,
    credential_id: c.credentialId,
    credential_id_normalized: c.credentialIdNormalized,
    public_key: c.publicKey,
    attestation_type: c.attestationType,
    aaguid: c.aaguid,
    transports: JSON.stringify(c.transports),
    sign_count: c.signCount,
    created_at: now,
    updated_at: now,
  }));
  try {
    await insertAuthenticators(tx, rows);
  } catch (err) {
    if (isUniqueViolation(err, "authenticators")) {
      throw alreadyExists(`${field}: an authenticator with this credential id already exists in this organization`);
    }
    throw err;
  }
  return rows.map((r) => r.id);
}
