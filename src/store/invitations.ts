// Invitations (docs/invitations.md §2): rows, the token digest, and the SDK's view of one
// (v1Invitation), which get_organization's organizationData.invitations carries.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Executor, InvitationsTable } from "./schema.ts";
import { lockingRead } from "./locks.ts";
import { timestampObject } from "./util.ts";

export type InvitationRow = InvitationsTable;

/** A fresh one-time token: 32 random bytes, base64url (43 characters). */
export function newInvitationToken(): string {
  return randomBytes(32).toString("base64url");
}

/** What is stored of a token: SHA-256 over the invitation id and the token, hex. */
export function invitationTokenDigest(invitationId: string, token: string): string {
  return createHash("sha256").update(`sigil:invitation\0${invitationId}\0${token}`).digest("hex");
}

/** Whether `token` is the invitation's, in constant time; false once it was used or revoked. */
export function invitationTokenMatches(row: Pick<InvitationRow, "id" | "token_digest">, token: string): boolean {
  if (row.token_digest === null) return false;
  const a = Buffer.from(invitationTokenDigest(row.id, token), "hex");
  const b = Buffer.from(row.token_digest, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The invitation, locked until the end of the transaction (accept and delete serialize on it). */
export async function lockInvitation(tx: Executor, organizationId: string, invitationId: string): Promise<InvitationRow | undefined> {
  const q = tx.selectFrom("invitations").selectAll().where("organization_id", "=", organizationId).where("id", "=", invitationId);
  return lockingRead(tx, q).executeTakeFirst();
}

export async function invitationsOf(db: Executor, organizationId: string): Promise<InvitationRow[]> {
  return db
    .selectFrom("invitations")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

/**
 * How many invitations get_organization lists (docs/invitations.md §6): rows are kept after
 * acceptance and deletion, so an organization's grow without end; live ones are at most
 * MAX_LIVE_INVITATIONS, far fewer.
 */
export const MAX_LISTED_INVITATIONS = 1_000;

/** The organization's MAX_LISTED_INVITATIONS most recent invitations, oldest first. */
export async function recentInvitationsOf(db: Executor, organizationId: string, limit = MAX_LISTED_INVITATIONS): Promise<InvitationRow[]> {
  const rows = await db
    .selectFrom("invitations")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.reverse();
}

/** The SDK's v1Invitation. An expired invitation that was never used still reads CREATED (docs/invitations.md §2.3). */
export function invitationView(r: InvitationRow) {
  return {
    invitationId: r.id,
    receiverUserName: r.receiver_user_name,
    receiverEmail: r.receiver_email,
    receiverUserTags: JSON.parse(r.receiver_user_tags) as string[],
    accessType: r.access_type,
    status: r.status,
    createdAt: timestampObject(r.created_at),
    updatedAt: timestampObject(r.updated_at),
    senderUserId: r.sender_user_id,
  };
}
