// verify_otp (docs/logins.md §3.4): checks a code against an OTP of the target organization and
// issues a verification token bound to the client's public key. V2 receives the code HPKE-
// encrypted to the OTP's own key (init_otp V3's bundle); V1 receives it in plain.
//
// A wrong code counts although the activity fails (keepWrites: the attempt is committed with
// the FAILED activity); the third wrong one burns the OTP. The OTP row is locked first, so
// concurrent attempts on one OTP are counted one after the other, and each status change is a
// conditional update as well: a code verifies once.
//
// Guesses are also limited per contact, across codes and organizations
// (docs/otp-limits-and-mail.md §2.1): every code checked takes a guess slot for the window
// first; a wrong one keeps it, a right one gives it back. With the contact's slots all held
// no code is checked at all — the right one is refused too (429) until the window frees one —
// so burning codes and asking for new ones gains an attacker nothing.
import { Type, type Static } from "@sinclair/typebox";
import { invalid, keepWrites, notFound } from "../../errors.ts";
import { codeMatches } from "../../logins/otp/code.ts";
import { openOtpBundle } from "../../logins/otp/bundle.ts";
import { DEFAULT_TOKEN_SECONDS, MAX_TOKEN_SECONDS, issueVerificationToken } from "../verification-tokens.ts";
import { publicKeyProblem } from "../../crypto/public-keys.ts";
import { p256FromPkcs8 } from "../../crypto/p256.ts";
import { Id, HexPublicKey } from "../../schemas/common.ts";
import { lockingRead } from "../../store/locks.ts";
import { releaseSlots } from "../../store/slots.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { contactScope } from "./init_otp.ts";
import { OTP_FEATURE, requireFeature } from "../organizations/feature-gate.ts";
import { contactKey, guessScope, takeGuess } from "../../logins/otp/limits.ts";
import { AAD } from "../../crypto/aad.ts";

export const MAX_ATTEMPTS = 3;

const TokenSeconds = Type.Optional(
  Type.String({
    pattern: "^[0-9]{1,6}$",
    errorMessage: `expirationSeconds must be a whole number of seconds from 1 to ${MAX_TOKEN_SECONDS}, as a string`,
  }),
);
const ParamsV2 = Type.Object({
  otpId: Id("OTP"),
  encryptedOtpBundle: Type.String({
    minLength: 1,
    maxLength: 8192,
    errorMessage: "encryptedOtpBundle must be the text encryptOtpCodeToBundle returns (at most 8192 characters)",
  }),
  expirationSeconds: TokenSeconds,
});
const ParamsV1 = Type.Object({
  otpId: Id("OTP"),
  otpCode: Type.String({ minLength: 1, maxLength: 64, errorMessage: "otpCode must be 1 to 64 characters" }),
  expirationSeconds: TokenSeconds,
  publicKey: Type.Optional(HexPublicKey),
});

const bad = (field: string, description: string) => invalid(`${field}: ${description}`, [{ field, description }]);

function tokenSeconds(given: string | undefined): number {
  if (given === undefined || given === "") return DEFAULT_TOKEN_SECONDS;
  const secs = Number(given);
  if (!(secs >= 1 && secs <= MAX_TOKEN_SECONDS))
    throw bad("parameters.expirationSeconds", `must be from 1 to ${MAX_TOKEN_SECONDS} seconds`);
  return secs;
}

/** The OTP's code and client key, from whichever version's parameters. */
export type Submitted = (target: () => ReturnType<typeof p256FromPkcs8>) => Promise<{ code: string; publicKey: string; field: string }>;

/** Checks a code against an OTP and issues a token bound to the submitted key (verify_otp, otp_auth). */
export async function verify(ctx: ExecuteContext, otpId: string, expirationSeconds: string | undefined, submitted: Submitted) {
  const { tx, now, services } = ctx;
  const lifetimeSeconds = tokenSeconds(expirationSeconds);
  const otp = await lockingRead(
    tx,
    tx.selectFrom("otps").selectAll().where("id", "=", otpId).where("organization_id", "=", ctx.organization.id),
  ).executeTakeFirst();
  // An OTP belongs to the organization it was initiated in: elsewhere it does not exist.
  if (!otp) throw notFound(`no OTP ${otpId} in organization ${ctx.organization.id}`);
  if (otp.status === "verified") throw bad("parameters.otpId", "this OTP has already been verified; request a new code");
  if (otp.status === "burnt") throw bad("parameters.otpId", `this OTP is locked after ${MAX_ATTEMPTS} invalid codes; request a new code`);
  if (Number(otp.expires_at) <= now) throw bad("parameters.otpId", "this OTP has expired; request a new code");
  await requireFeature(
    ctx,
    OTP_FEATURE[otp.otp_type],
    otp.otp_type === "OTP_TYPE_EMAIL" ? "email OTP authentication" : "SMS OTP authentication",
  );

  const opened = await services.masterKey.open(otp.target_private_key_sealed, AAD.otpTarget(otp.id));
  const given = await submitted(() => p256FromPkcs8(opened));
  const keyProblem = publicKeyProblem("API_KEY_CURVE_P256", given.publicKey);
  if (keyProblem) throw bad(given.field, `public_key: ${keyProblem}`);

  const scope = contactScope(otp.organization_id, otp.contact_normalized);
  const key = contactKey(otp.otp_type, otp.contact);
  await takeGuess(tx, services.logins, key, ctx.activityId, now);
  if (!codeMatches(services.masterKey, otp.id, given.code, otp.code_digest)) {
    const attempts = otp.attempts + 1;
    const burnt = attempts >= MAX_ATTEMPTS;
    await tx
      .updateTable("otps")
      .set({ attempts, status: burnt ? "burnt" : "live", updated_at: now })
      .where("id", "=", otp.id)
      .where("status", "=", "live")
      .where("attempts", "=", otp.attempts)
      .execute();
    // A burnt code keeps its place among the contact's live codes until it expires
    // (docs/otp-limits-and-mail.md §2.2): burning codes does not make room for fresh ones.
    const left = MAX_ATTEMPTS - attempts;
    throw keepWrites(
      invalid(
        burnt
          ? `Invalid OTP code: the OTP is now locked after ${MAX_ATTEMPTS} invalid codes; request a new code`
          : `Invalid OTP code: ${left} attempt${left === 1 ? "" : "s"} left`,
        [{ field: given.field, description: "Invalid OTP code" }],
      ),
    );
  }
  const res = await tx
    .updateTable("otps")
    .set({ status: "verified", updated_at: now })
    .where("id", "=", otp.id)
    .where("status", "=", "live")
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw bad("parameters.otpId", "this OTP has already been verified; request a new code");
  await releaseSlots(tx, scope, otp.id);
  // A right code is not a wrong guess.
  await releaseSlots(tx, guessScope(key), ctx.activityId);
  const verificationToken = await issueVerificationToken(ctx, {
    otpId: otp.id,
    verificationType: otp.otp_type,
    contact: otp.contact,
    publicKey: given.publicKey,
    lifetimeSeconds,
  });
  return { verificationToken };
}

const Result = Type.Object({ verificationToken: Type.String() });
const common = { resource: "OTP", action: "VERIFY", kind: "VERIFY_OTP", parentMayStamp: true, returns: Result };

export const verifyOtpV2 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_VERIFY_OTP_V2",
  params: ParamsV2,
  summary: "Check an HPKE-encrypted OTP code; returns a verification token bound to the client key inside the bundle.",
  execute: (ctx, p: Static<typeof ParamsV2>) =>
    verify(ctx, p.otpId, p.expirationSeconds, async (target) => {
      const opened = await openOtpBundle(target(), p.encryptedOtpBundle);
      if ("problem" in opened) throw bad("parameters.encryptedOtpBundle", opened.problem);
      return { code: opened.otpCode, publicKey: opened.publicKey, field: "parameters.encryptedOtpBundle" };
    }),
});

export const verifyOtpV1 = defineActivity({
  ...common,
  type: "ACTIVITY_TYPE_VERIFY_OTP",
  params: ParamsV1,
  // The plain code is live until verified: recorded sealed, shown as "<redacted>" (docs/activities.md §10).
  secretParams: ["otpCode"],
  summary: "Check an OTP code sent in plain (older version); publicKey is required: tokens here are always bound to a client key.",
  // Tokens are always key-bound (otp_login and sign-up check a client signature by that key),
  // so the key the swagger calls optional is required here.
  check: (p: Static<typeof ParamsV1>) => {
    if (p.publicKey === undefined)
      throw bad("parameters.publicKey", "required: this server binds every verification token to a client public key");
  },
  execute: (ctx, p: Static<typeof ParamsV1>) =>
    verify(ctx, p.otpId, p.expirationSeconds, async () => ({ code: p.otpCode, publicKey: p.publicKey!, field: "parameters.otpCode" })),
});
