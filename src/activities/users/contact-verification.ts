// Verified contacts (docs/logins.md §7, docs/organizations.md §1.3, §5.2;
// docs/login-lookups.md §1): a user's
// email or phone number is verified when it was set with a verification token that proves it
// and is presented by the token's key — at sign-up (create_sub_organization, with the key's
// client signature) or by update_user_email / update_user_phone_number (stamped by the key)
// — when a login naming the user's own organization proves it, or when the app's backend
// vouched for it (create_sub_organization by a top-level organization). Setting a contact
// otherwise leaves it unverified. Logins that search downward from an ancestor and
// list_verified_suborgs find only verified ones.
//
// A token binds its contact to one account once. Sign-up and contact updates share the
// token's "signup" use: one OTP verification may create one account or verify one contact
// on an existing user, not both, and not several (otherwise one proof of an address would
// mark it verified on any number of users across sub-organizations, and the look-up by
// verified contact would no longer name one account). Look-ups and the login use are
// separate (core looks the account up, signs up, then logs in with the same token).
import { Type } from "@sinclair/typebox";
import { alreadyExists, invalid, notFound } from "../../errors.ts";
import type { Executor, OtpType } from "../../store/schema.ts";
import { lockUsers } from "../../store/locks.ts";
import { isUniqueViolation } from "../../store/util.ts";
import { requireStampedByTokenKey, requireToken, useToken } from "../verification-tokens.ts";
import type { VerificationClaims } from "../../auth/tokens.ts";
import type { ExecuteContext } from "../define.ts";

export type ContactKind = "email" | "phone";

/** A verification token as parameters carry it (the JWT; its checks are requireToken's). */
export const VerificationTokenParam = Type.String({
  maxLength: 8192,
  errorMessage: "must be a verification token (a JWT of at most 8192 characters)",
});

const OTP_TYPE = new Map<ContactKind, OtpType>([
  ["email", "OTP_TYPE_EMAIL"],
  ["phone", "OTP_TYPE_SMS"],
]);
const KIND_OF = new Map<string, ContactKind>([
  ["OTP_TYPE_EMAIL", "email"],
  ["OTP_TYPE_SMS", "phone"],
]);
const WHAT = new Map<ContactKind, string>([
  ["email", "email address"],
  ["phone", "phone number"],
]);

/** "email address" / "phone number", for messages. */
export const contactWord = (kind: ContactKind): string => WHAT.get(kind)!;
const withArticle = (kind: ContactKind) => (kind === "email" ? "an email address" : "a phone number");

/** Which contact a token verifies (email for OTP_TYPE_EMAIL, phone for OTP_TYPE_SMS). */
export function contactKindOf(claims: VerificationClaims, field: string): ContactKind {
  const kind = KIND_OF.get(claims.verification_type);
  if (!kind)
    throw invalid(`${field}: the verification token verifies neither an email address nor a phone number`, [
      { field, description: "unsupported verification type" },
    ]);
  return kind;
}

/** Emails are compared case-insensitively (one mailbox, as the unique index treats them); phone numbers (E.164) exactly. */
export function sameContact(kind: ContactKind, a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) return false;
  return kind === "email" ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** The token must verify a contact of `kind` equal to `value`. */
export function requireTokenFor(claims: VerificationClaims, kind: ContactKind, value: string, field: string): void {
  if (claims.verification_type !== OTP_TYPE.get(kind)) {
    throw invalid(`${field}: the verification token does not verify ${withArticle(kind)}`, [
      { field, description: `must be a token of type ${OTP_TYPE.get(kind)}` },
    ]);
  }
  if (!sameContact(kind, claims.contact, value)) {
    throw invalid(`${field}: the verification token was issued for a different ${contactWord(kind)}`, [
      { field, description: `must verify the ${contactWord(kind)} being set` },
    ]);
  }
}

/**
 * Records that the token has bound its contact to an account (see above); a second binding
 * is refused. One conditional update (useToken): of two concurrent uses, one wins.
 */
export async function bindToken(db: Executor, tokenId: string, now: number, field: string): Promise<void> {
  const result = await useToken(db, tokenId, "signup", now);
  if (result === "used") return;
  const why =
    result === "spent-by-login"
      ? "has already been used to log in, which spends it for sign-up and contact verification too"
      : "has already been used to sign up or to verify a contact";
  throw invalid(`${field}: this verification token ${why}; verify the contact again for a new token`, [{ field, description: why }]);
}

/** Sets the user's contact and its verification time (null: unverified). */
export async function setContact(
  db: Executor,
  userId: string,
  kind: ContactKind,
  value: string | null,
  verifiedAt: number | null,
  now: number,
): Promise<void> {
  const q = db.updateTable("users").where("id", "=", userId);
  if (kind === "email") {
    await q.set({ email: value, email_normalized: value?.toLowerCase() ?? null, email_verified_at: verifiedAt, updated_at: now }).execute();
  } else {
    await q.set({ phone: value, phone_verified_at: verifiedAt, updated_at: now }).execute();
  }
}

/**
 * The app's backend vouches for the contacts it writes at sign-up (docs/login-lookups.md §1,
 * our choice): create_sub_organization executed in a top-level organization (one made by the
 * operator; only its own credentials can act there) marks every root user's email and phone
 * number verified. A sub-organization creating sub-organizations of its own vouches for
 * nothing: it is a tenant, and its writes must not name users to its ancestors' logins.
 */
export async function vouchContacts(db: Executor, userIds: readonly string[], now: number): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .updateTable("users")
    .set({ email_verified_at: now })
    .where("id", "in", userIds)
    .where("email", "is not", null)
    .where("email_verified_at", "is", null)
    .execute();
  await db
    .updateTable("users")
    .set({ phone_verified_at: now })
    .where("id", "in", userIds)
    .where("phone", "is not", null)
    .where("phone_verified_at", "is", null)
    .execute();
}

/** Marks the user's current contact of `kind` verified (sign-up). */
export async function markVerified(db: Executor, userId: string, kind: ContactKind, now: number): Promise<void> {
  await db
    .updateTable("users")
    .set(kind === "email" ? { email_verified_at: now } : { phone_verified_at: now })
    .where("id", "=", userId)
    .execute();
}

const TOKEN_FIELD = "parameters.verificationToken";

/**
 * update_user_email / update_user_phone_number: sets the contact; "" removes it. With a
 * token proving the new value the contact becomes verified (and the token is bound);
 * without one it is unverified, whatever it was before.
 */
export async function updateContact(
  ctx: ExecuteContext,
  kind: ContactKind,
  p: { userId: string; value: string; verificationToken?: string | undefined },
  valueField: string,
): Promise<{ userId: string }> {
  // The user's lock keeps it alive until commit (delete_users locks it too).
  const [userId] = await lockUsers(ctx.tx, ctx.organization.id, [p.userId]);
  if (!userId) throw notFound(`no user ${p.userId} in organization ${ctx.organization.id}`);
  let verifiedAt: number | null = null;
  // "" is an absent token (proto3 JSON; core omits the field when it has none).
  if (p.verificationToken) {
    if (p.value === "") {
      throw invalid(`${TOKEN_FIELD}: a token verifies the ${contactWord(kind)} being set; omit it when removing the ${contactWord(kind)}`, [
        { field: TOKEN_FIELD, description: `must be omitted when the ${contactWord(kind)} is removed` },
      ]);
    }
    const claims = await requireToken(ctx, p.verificationToken, TOKEN_FIELD);
    requireTokenFor(claims, kind, p.value, TOKEN_FIELD);
    await requireStampedByTokenKey(ctx, claims, TOKEN_FIELD);
    await bindToken(ctx.tx, claims.id, ctx.now, TOKEN_FIELD);
    verifiedAt = ctx.now;
  }
  try {
    await setContact(ctx.tx, userId, kind, p.value === "" ? null : p.value, verifiedAt, ctx.now);
  } catch (err) {
    if (isUniqueViolation(err, "users")) throw alreadyExists(`${valueField}: a user with this email already exists in the organization`);
    throw err;
  }
  return { userId };
}
