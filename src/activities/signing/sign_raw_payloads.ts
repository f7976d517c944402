import { Type, type Static } from "@sinclair/typebox";
import { maxItems } from "../../schemas/common.ts";
import {
  checkPayloads,
  checkSigningInput,
  digestInput,
  hashTypedData,
  HashFunction,
  Payload,
  PayloadEncoding,
} from "../../signing/payload.ts";
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
  const inputs: Uint8Array[] = [];
  for (const [i, payload] of p.payloads.entries())
    inputs.push(await digestInput(signer.curve, payload, p.encoding, p.hashFunction, `parameters.payloads[${i}]`, p));
  const signatures = await withSigningKey(ctx.services.masterKey, signer, (key) =>
    inputs.map((input) => signWithKey(signer.curve, key, input)),
  );
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
  check: (p) => checkPayloads(p.payloads, p.encoding, p.hashFunction, (i) => `parameters.payloads[${i}]`, p, "parameters.payloads"),
  // As sign_raw_payload: typed data hashed once, in slices, before the transaction (docs/signing.md §2.4).
  admit: (p) => hashTypedData(p),
  checkSigner: (p, { curve }) =>
    p.payloads.forEach((payload, i) => checkSigningInput(curve, payload, p.encoding, p.hashFunction, `parameters.payloads[${i}]`)),
  execute,
});
