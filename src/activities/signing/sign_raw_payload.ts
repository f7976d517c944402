import { Type, type Static } from "@sinclair/typebox";
import { checkPayload, HashFunction, Payload, PayloadEncoding, signingInput } from "../../signing/payload.ts";
import { requireSigner, withSigningKey } from "../../signing/resolve.ts";
import { SignWith, SignatureSchema } from "../../signing/schema.ts";
import { signWithKey } from "../../signing/sign.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  signWith: SignWith,
  payload: Payload,
  encoding: PayloadEncoding,
  hashFunction: HashFunction,
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const signer = await requireSigner(ctx.tx, ctx.organization.id, p.signWith);
  const input = signingInput(signer.curve, p.payload, p.encoding, p.hashFunction, "parameters.payload");
  return withSigningKey(ctx.tx, ctx.services.masterKey, signer, (key) => signWithKey(signer.curve, key, input));
}

export const signRawPayloadV2 = defineActivity({
  type: "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2",
  // docs/signing.md §4: PRIVATE_KEY / SIGN whatever key signs (upstream's mapping).
  resource: "PRIVATE_KEY",
  action: "SIGN",
  kind: "SIGN_RAW_PAYLOAD",
  summary: "Sign a raw payload with a wallet account or private key of the organization (docs/signing.md §2).",
  params: Params,
  returns: SignatureSchema,
  policySigner: (p) => p.signWith,
  check: (p) => checkPayload(p.payload, p.encoding, p.hashFunction, "parameters.payload"),
  checkSigner: (p, curve) => void signingInput(curve, p.payload, p.encoding, p.hashFunction, "parameters.payload"),
  execute,
});
