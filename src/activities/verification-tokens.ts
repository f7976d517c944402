// Verification tokens as records (docs/logins.md §3.5): verify_otp issues one bound to the
// public key from the encrypted OTP bundle; sign-up, login and contact updates present it.
// A token is valid until `exp` for look-ups (core uses one token for an account look-up,
// then sign-up, then login), but each *use* is recorded by a conditional update — a token
// signs up at most once and logs in at most once, however many API nodes race for it.
import { invalid } from "../errors.ts";
import type { ExecuteContext } from "./define.ts";
import { organizationChain, type ChainCache } from "../store/organizations.ts";
import type { Executor, OtpType } from "../store/schema.ts";
import { readVerificationToken, signVerificationToken, type VerificationClaims } from "../auth/tokens.ts";

/** verify_otp's expirationSeconds: default one hour, at most a day (docs/logins.md §3.4). */
export const DEFAULT_TOKEN_SECONDS = 3600;
export const MAX_TOKEN_SECONDS = 86400;

export interface IssuedToken {
  otpId: string;
  verificationType: OtpType;
  contact: string;
  /** Compressed P-256 hex from the decrypted bundle. */
  publicKey: string;
  lifetimeSeconds: number;
}

/** Signs a token for the verified contact and records it; returns the JWT. */
export async function issueVerificationToken(ctx: ExecuteContext, t: IssuedToken): Promise<string> {
  const key = await ctx.services.serviceKey("VERIFICATION_TOKEN");
  const expiresAt = ctx.now + t.lifetimeSeconds * 1000;
  const { token, claims } = signVerificationToken(key, {
    exp: String(expiresAt),
    organization_id: ctx.organization.id,
    verification_type: t.verificationType,
    contact: t.contact,
    public_key: t.publicKey,
  });
  await ctx.tx
    .insertInto("verification_tokens")
    .values({
      id: claims.id,
      organization_id: ctx.organization.id,
      otp_id: t.otpId,
      verification_type: t.verificationType,
      contact: t.contact,
      public_key: t.publicKey,
      expires_at: expiresAt,
      signup_used_at: null,
      login_used_at: null,
      created_at: ctx.now,
    })
    .execute();
  return token;
}

/**
 * Why `token` may not be used in `organizationId`, or its claims: a valid signature by a
 * VERIFICATION_TOKEN service key, not expired, recorded by this service, and issued by the
 * organization itself or one of its ancestors (a parent's token serves its sub-organizations;
 * a sub-organization's only itself).
 */
export async function readToken(
  db: Executor,
  chains: ChainCache,
  verifyingKeys: readonly string[],
  token: string,
  organizationId: string,
  now: number,
): Promise<{ claims: VerificationClaims } | { problem: string }> {
  const read = readVerificationToken(token, verifyingKeys, now);
  if ("problem" in read) return read;
  const row = await db
    .selectFrom("verification_tokens")
    .select(["id", "organization_id"])
    .where("id", "=", read.claims.id)
    .executeTakeFirst();
  if (!row || row.organization_id !== read.claims.organization_id) return { problem: "unknown verification token" };
  const chain = await organizationChain(db, organizationId, chains);
  if (!chain.includes(row.organization_id)) {
    return {
      problem: `verification token was issued by organization ${row.organization_id}, which is not ${organizationId} or one of its parents`,
    };
  }
  return read;
}

/** readToken for a handler: a problem is a 400 naming the field. */
export async function requireToken(ctx: ExecuteContext, token: string, field: string): Promise<VerificationClaims> {
  const read = await readToken(
    ctx.tx,
    ctx.chains,
    await ctx.services.verifyingKeys("VERIFICATION_TOKEN"),
    token,
    ctx.organization.id,
    ctx.now,
  );
  if ("problem" in read) throw invalid(`${field}: ${read.problem}`, [{ field, description: read.problem }]);
  return read.claims;
}

/**
 * Records one use of the token, or says why it cannot: a second use of the same kind, or a
 * sign-up (or contact binding) once the token has logged in — @turnkey/core uses a token to
 * sign up and then to log in, never the other way round, so a token its owner has logged in
 * with is spent for binding too (docs/login-lookups.md §4). One conditional update: of two
 * concurrent uses exactly one changes the row.
 */
export async function useToken(
  db: Executor,
  tokenId: string,
  use: "login" | "signup",
  now: number,
): Promise<"used" | "spent" | "spent-by-login"> {
  const column = use === "login" ? "login_used_at" : "signup_used_at";
  let q = db
    .updateTable("verification_tokens")
    .set({ [column]: now })
    .where("id", "=", tokenId)
    .where(column, "is", null);
  if (use === "signup") q = q.where("login_used_at", "is", null);
  const res = await q.executeTakeFirst();
  if (Number(res.numUpdatedRows) === 1) return "used";
  if (use === "login") return "spent";
  const row = await db.selectFrom("verification_tokens").select("login_used_at").where("id", "=", tokenId).executeTakeFirst();
  return row?.login_used_at != null ? "spent-by-login" : "spent";
}

/** The token's login use (useToken): a token already used to log in is a 400 naming the field. */
export async function consumeLogin(db: Executor, tokenId: string, now: number, field: string): Promise<void> {
  if ((await useToken(db, tokenId, "login", now)) === "used") return;
  throw invalid(`${field}: this verification token has already been used to log in`, [{ field, description: "already used to log in" }]);
}

/**
 * The public key of the stamp that submitted the activity: the actor carries it at
 * submission; an activity executed later on an approval reads it from the submitter's vote
 * (the first one, which the submission wrote).
 */
export async function stampKeyOf(ctx: ExecuteContext): Promise<string | undefined> {
  if (ctx.actor.stampPublicKey) return ctx.actor.stampPublicKey;
  const vote = await ctx.tx
    .selectFrom("votes")
    .select("public_key")
    .where("activity_id", "=", ctx.activityId)
    .where("user_id", "=", ctx.actor.userId)
    .orderBy("created_at")
    .orderBy("id")
    .executeTakeFirst();
  return vote?.public_key;
}

/**
 * A token presented without a client signature (update_user_email / _phone_number have no
 * such field: SDK type v1UpdateUserEmailIntent) is accepted only when the request is
 * stamped by the key the token is bound to — the token alone is not a bearer credential
 * (docs/login-lookups.md §4).
 */
export async function requireStampedByTokenKey(ctx: ExecuteContext, claims: VerificationClaims, field: string): Promise<void> {
  const key = await stampKeyOf(ctx);
  if (!key || key.toLowerCase() !== claims.public_key.toLowerCase()) {
    const why = "the request must be stamped by the key the verification token is bound to (the public key given to verify_otp)";
    throw invalid(`${field}: ${why}`, [{ field, description: why }]);
  }
}
