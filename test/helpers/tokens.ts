// In-process tier only: verification tokens minted straight into a harness's store, signed by
// its real VERIFICATION_TOKEN service key, for tests of what *consumes* tokens (sign-up,
// attested stamps, contact updates). The end-to-end tests get theirs through the real OTP
// flow (init_otp → SMTP → verify_otp), never from here.
import { activeServiceKey } from "../../src/auth/service-keys.ts";
import { signVerificationToken, type VerificationClaims } from "../../src/auth/tokens.ts";
import { signP256, type P256Private, generateP256 } from "../../src/crypto/p256.ts";
import type { OtpType } from "../../src/store/schema.ts";
import { newId } from "../../src/store/util.ts";
import type { Harness } from "./inproc.ts";

export interface MintedToken {
  token: string;
  claims: VerificationClaims;
  /** The key pair the token is bound to (its `public_key`): signs client signatures. */
  key: P256Private;
}

export async function mintVerificationToken(
  h: Harness,
  /** boundTo: bind the token to this compressed public key instead of `key`'s (e.g. a caller's API key, which then stamps the request that presents it). */
  opts: { organizationId?: string; contact: string; type?: OtpType; lifetimeSeconds?: number; key?: P256Private; boundTo?: string },
): Promise<MintedToken> {
  const db = h.service.store.db;
  const organizationId = opts.organizationId ?? h.root.organizationId;
  const key = opts.key ?? generateP256();
  const now = Date.now();
  const expiresAt = now + (opts.lifetimeSeconds ?? 3600) * 1000;
  const signer = await activeServiceKey(h.service.state.serviceKeys, db, h.service.masterKey, "VERIFICATION_TOKEN");
  const { token, claims } = signVerificationToken(signer, {
    exp: String(expiresAt),
    organization_id: organizationId,
    verification_type: opts.type ?? "OTP_TYPE_EMAIL",
    contact: opts.contact,
    public_key: opts.boundTo ?? key.publicCompressed,
  });
  await db
    .insertInto("verification_tokens")
    .values({
      id: claims.id,
      organization_id: organizationId,
      otp_id: newId(),
      verification_type: claims.verification_type,
      contact: claims.contact,
      public_key: claims.public_key,
      expires_at: expiresAt,
      signup_used_at: null,
      login_used_at: null,
      created_at: now,
    })
    .execute();
  return { token, claims, key };
}

/** A client signature (docs/logins.md §3.6) by `key` over `usage` as core builds it: raw r‖s hex over SHA-256(message). */
export function clientSignature(key: P256Private, usage: Record<string, unknown>) {
  const message = JSON.stringify(usage);
  return {
    publicKey: key.publicCompressed,
    scheme: "CLIENT_SIGNATURE_SCHEME_API_P256",
    message,
    signature: signP256(key, Buffer.from(message, "utf8"), "raw").toString("hex"),
  };
}
