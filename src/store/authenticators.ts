// Passkeys (WebAuthn authenticators) of users: what X-Stamp-WebAuthn stamps are checked
// against, and their view as the SDK's Authenticator object.
import { Type } from "@sinclair/typebox";
import type { AuthenticatorsTable, Executor } from "./schema.ts";
import { timestampObject } from "./util.ts";
import { Timestamp } from "../schemas/common.ts";

export type AuthenticatorRow = AuthenticatorsTable;

/** Per user, as the upstream service documents (429 "user has exceeded maximum authenticators"). */
export const MAX_AUTHENTICATORS_PER_USER = 10;

export const AUTHENTICATOR_CREDENTIAL_TYPE = "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR" as const;

/** The Authenticator object (swagger v1Authenticator), for the OpenAPI document. */
export const AuthenticatorSchema = Type.Object({
  transports: Type.Array(Type.String()),
  attestationType: Type.String(),
  aaguid: Type.String(),
  credentialId: Type.String({ description: "as submitted at registration (b64url of the raw credential id)" }),
  model: Type.String(),
  credential: Type.Object({ publicKey: Type.String({ description: "b64url of the COSE public key" }), type: Type.String() }),
  authenticatorId: Type.String(),
  authenticatorName: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export function authenticatorView(a: AuthenticatorRow) {
  return {
    transports: JSON.parse(a.transports) as string[],
    attestationType: a.attestation_type,
    aaguid: a.aaguid,
    credentialId: a.credential_id,
    // No metadata service is consulted: the model is not known.
    model: "",
    credential: { publicKey: a.public_key, type: AUTHENTICATOR_CREDENTIAL_TYPE },
    authenticatorId: a.id,
    authenticatorName: a.name,
    createdAt: timestampObject(a.created_at),
    updatedAt: timestampObject(a.updated_at),
  };
}
export type AuthenticatorView = ReturnType<typeof authenticatorView>;

export async function authenticatorsOfUsers(db: Executor, userIds: readonly string[]): Promise<AuthenticatorRow[]> {
  if (userIds.length === 0) return [];
  return db.selectFrom("authenticators").selectAll().where("user_id", "in", userIds).orderBy("created_at").orderBy("id").execute();
}

export async function insertAuthenticators(db: Executor, rows: readonly AuthenticatorRow[]): Promise<void> {
  if (rows.length)
    await db
      .insertInto("authenticators")
      .values([...rows])
      .execute();
}

/**
 * Records a passkey's new signature counter only if it moved forward: of two requests
 * replaying one assertion (or racing with counters n and n+1), at most one raises it.
 * Returns whether this one did.
 */
export async function advanceSignCount(db: Executor, authenticatorId: string, signCount: number): Promise<boolean> {
  const res = await db
    .updateTable("authenticators")
    .set({ sign_count: signCount })
    .where("id", "=", authenticatorId)
    .where("sign_count", "<", signCount)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
