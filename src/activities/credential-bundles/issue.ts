// A legacy login's credential (docs/logins.md §9.2): a fresh P-256 key pair made here; its
// public half becomes an expiring session key of the user (activities/sessions/create-session.ts createSession:
// the same lifetime bounds, 10-key cap and invalidateExisting as every login), its private
// half leaves only sealed to the client's target key. Nothing private is stored or logged:
// the bundle is ciphertext only the target key's holder opens.
import { Type } from "@sinclair/typebox";
import type { ExecuteContext } from "../define.ts";
import { createSession } from "../sessions/create-session.ts";
import { submitterProfile } from "../sessions/submitter-profile.ts";
import { invalid } from "../../errors.ts";
import { generateP256, privateScalar } from "../../crypto/p256.ts";
import { sealCredentialBundle } from "./seal.ts";

export interface CredentialRequest {
  userId: string;
  /** The user's organization. */
  organizationId: string;
  targetPublicKey: string;
  expirationSeconds?: string;
  invalidateExisting?: boolean;
  /** The key's name; default `<label> - <ISO time>` as upstream names them. */
  apiKeyName?: string;
  label: string;
}

/** The fields the credential-bundle logins' intents share (SDK: v1EmailAuthIntentV3, v1OauthIntent, v1OtpAuthIntent …). */
export interface BundleLoginFields {
  targetPublicKey: string;
  expirationSeconds?: string;
  invalidateExisting?: boolean;
  apiKeyName?: string;
}

/** The credential request for `user` from a login's own fields (absent ones stay absent). */
export function credentialFor(user: { id: string; organization_id: string }, label: string, p: BundleLoginFields): CredentialRequest {
  return {
    userId: user.id,
    organizationId: user.organization_id,
    targetPublicKey: p.targetPublicKey,
    label,
    ...(p.expirationSeconds !== undefined ? { expirationSeconds: p.expirationSeconds } : {}),
    ...(p.invalidateExisting !== undefined ? { invalidateExisting: p.invalidateExisting } : {}),
    ...(p.apiKeyName !== undefined ? { apiKeyName: p.apiKeyName } : {}),
  };
}

/** What a credential-bundle login answers (v1OauthResult, v1OtpAuthResult): the user, its new key, the sealed bundle. */
export const BundleLoginResult = Type.Object({
  userId: Type.String(),
  apiKeyId: Type.String(),
  credentialBundle: Type.String({ description: "HPKE-sealed to targetPublicKey: @turnkey/crypto decryptCredentialBundle opens it" }),
});

export interface IssuedCredential {
  apiKeyId: string;
  credentialBundle: string;
}

/** Throws 400 naming parameters.targetPublicKey unless it is a P-256 point. */
export function checkTargetKey(targetPublicKey: string): void {
  const hex = targetPublicKey.startsWith("0x") ? targetPublicKey.slice(2) : targetPublicKey;
  if (!/^(?:0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$/.test(hex)) {
    throw invalid("parameters.targetPublicKey: must be a P-256 public key, compressed (66) or uncompressed (130) hex", [
      { field: "parameters.targetPublicKey", description: "a P-256 public key (hex)" },
    ]);
  }
}

export async function issueCredential(ctx: ExecuteContext<unknown>, r: CredentialRequest): Promise<IssuedCredential> {
  const key = generateP256();
  const scalar = privateScalar(key);
  try {
    const credentialBundle = await sealCredentialBundle(r.targetPublicKey, scalar);
    if (!credentialBundle) {
      throw invalid("parameters.targetPublicKey: not a point of the P-256 curve", [
        { field: "parameters.targetPublicKey", description: "a P-256 public key (hex)" },
      ]);
    }
    // Submitted by a session with a profile, the credential keeps that scope (docs/sessions-and-network.md §6.3).
    const profile = await submitterProfile(ctx);
    const { apiKeyId } = await createSession(ctx, {
      userId: r.userId,
      organizationId: r.organizationId,
      publicKey: key.publicCompressed,
      ...(r.expirationSeconds !== undefined ? { expirationSeconds: r.expirationSeconds } : {}),
      ...(r.invalidateExisting !== undefined ? { invalidateExisting: r.invalidateExisting } : {}),
      ...(profile !== undefined ? { sessionProfileId: profile } : {}),
    });
    const name = r.apiKeyName || `${r.label} - ${new Date(ctx.now).toISOString()}`;
    await ctx.tx.updateTable("api_keys").set({ name }).where("id", "=", apiKeyId).execute();
    return { apiKeyId, credentialBundle };
  } finally {
    scalar.fill(0);
  }
}
