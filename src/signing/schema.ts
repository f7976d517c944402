// Request and result pieces the signing activities share (SDK types v1SignRawPayloadIntentV2,
// v1SignRawPayloadResult).
import { Type } from "@sinclair/typebox";

/** A wallet account address, private key id or public key (docs/signing.md §1). */
export const SignWith = Type.String({
  minLength: 1,
  maxLength: 256,
  errorMessage: "must be a wallet account address, a private key id or a public key (at most 256 characters)",
});

/** Payloads one sign_raw_payloads may carry. [our choice] */
export const MAX_PAYLOADS_PER_REQUEST = 100;

export const SignatureSchema = Type.Object({ r: Type.String(), s: Type.String(), v: Type.String() });
