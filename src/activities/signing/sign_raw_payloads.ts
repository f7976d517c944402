import { Type, type Static } from "@sinclair/typebox";
import { maxItems } from "../../schemas/common.ts";
import { checkPayload, checkSigningInput, HashFunction, Payload, PayloadEncoding, signingInput } from "../../signing/payload.ts";
import { signerInTransaction, withSigningKey } from "../../signing/resolve.ts";
import { MAX_PAYLOADS_PER_REQUEST, SignWith, SignatureSchema } from "../../signing/schema.ts";
import { signWithKey } from "../../signing/sign.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  signWith: SignWith,
  payloads: maxItems(Payload, "payloads", MAX_PAYLOADS_PER_REQUEST, 1),
  encoding: PayloadEncoding,
  hashFunction: HashFunction,
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const signer = await signerInTransaction(ctx, p.signWith);
  // Every payload is checked before the key is opened: one bad payload signs nothing.
  const inputs = p.payloads.map((payload, i) => signingInput(signer.curve, payload, p.encoding, p.hashFunction, `parameters.payloads[${i}]`));
  const signatures = await withSigningKey(ctx.services.masterKey, signer, (key) => inputs.map((input) => signWithKey(signer.curve, key, input)));
  return { signatures };
}

export const signRawPayloads = defineActivity({
  type: "ACTIVITY_TYPE_SIGN_RAW_PAYLOADS",
  resource: "PRIVATE_KEY",
  action: "SIGN",
  kind: "SIGN_RAW_PAYLOADS",
  summary: "Sign several raw payloads with one key, signatures in payload order (docs/signing.md §2).",
  params: Params,
  returns: Type.Object({ signatures: Type.Array(SignatureSchema) }),
  policySigner: (p) => p.signWith,
  check: (p) => p.payloads.forEach((payload, i) => checkPayload(payload, p.encoding, p.hashFunction, `parameters.payloads[${i}]`)),
  checkSigner: (p, { curve }) => p.payloads.forEach((payload, i) => checkSigningInput(curve, payload, p.encoding, p.hashFunction, `parameters.payloads[${i}]`)),
  execute,
});
