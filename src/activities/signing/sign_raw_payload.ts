import { Type, type Static } from "@sinclair/typebox";
import {
  checkPayload,
  checkSigningInput,
  digestInput,
  hashTypedData,
  HashFunction,
  Payload,
  PayloadEncoding,
} from "../../signing/payload.ts";
import { signerInTransaction, withSigningKey } from "../../signing/resolve.ts";
import { SignWith, SignatureSchema } from "../../signing/schema.ts";
import { signWithKey } from "../../signing/sign.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { parseEip712 } from "../../signing/parsers/eip712.ts";
import { ParseError } from "../../signing/parsers/errors.ts";
import { eip712Facts } from "../../signing/facts.ts";
import type { SigningFacts } from "../../policy/facts.ts";

/**
 * `eth.eip_712` for typed data the parser reads (docs/signing-policies.md §1.2). Typed data it
 * cannot read (e.g. no EIP712Domain type, which the hash tolerates) binds nothing, so a policy
 * reading `eth.eip_712` is OUTCOME_ERROR there — never an allow.
 */
export function typedDataFacts(p: { payload: string; encoding: string }): SigningFacts | undefined {
  if (p.encoding !== "PAYLOAD_ENCODING_EIP712") return undefined;
  try {
    return eip712Facts(parseEip712(p.payload));
  } catch (err) {
    if (err instanceof ParseError) return undefined;
    throw err;
  }
}

const Params = Type.Object({
  signWith: SignWith,
  payload: Payload,
  encoding: PayloadEncoding,
  hashFunction: HashFunction,
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const signer = await signerInTransaction(ctx, p.signWith);
  const input = await digestInput(signer.curve, p.payload, p.encoding, p.hashFunction, "parameters.payload", p);
  return withSigningKey(ctx.services.masterKey, signer, (key) => signWithKey(signer.curve, key, input));
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
  check: (p) => checkPayload(p.payload, p.encoding, p.hashFunction, "parameters.payload", p),
  // Typed data is hashed once, after authentication and outside the signing transaction, in
  // slices that let other requests run (docs/signing.md §2.4).
  admit: (p) => hashTypedData(p),
  checkSigner: (p, { curve }) => checkSigningInput(curve, p.payload, p.encoding, p.hashFunction, "parameters.payload"),
  policySigning: typedDataFacts,
  execute,
});
