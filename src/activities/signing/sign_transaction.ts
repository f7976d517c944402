import { Type, type Static } from "@sinclair/typebox";
import { signerInTransaction, signerPublicKey, withSigningKey } from "../../signing/resolve.ts";
import { SignWith } from "../../signing/schema.ts";
import { checkSigner, parseTransaction, signParsed, transactionFacts, TRANSACTION_TYPES } from "../../signing/transaction.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

/** 128 KiB of transaction as hex, with a 0x prefix allowed. [our choice] */
export const MAX_UNSIGNED_TRANSACTION_CHARS = 2 * 128 * 1024 + 2;

// SDK type v1SignTransactionIntentV2.
const Params = Type.Object({
  signWith: SignWith,
  unsignedTransaction: Type.String({
    minLength: 1,
    maxLength: MAX_UNSIGNED_TRANSACTION_CHARS,
    errorMessage: `must be the unsigned transaction as hex, at most ${MAX_UNSIGNED_TRANSACTION_CHARS} characters`,
  }),
  type: Type.Union(TRANSACTION_TYPES.map((t) => Type.Literal(t)), { errorMessage: `must be one of ${TRANSACTION_TYPES.join(", ")}` }),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const parsed = parseTransaction(p.type, p.unsignedTransaction, p.signWith);
  const signer = await signerInTransaction(ctx, p.signWith);
  const publicKey = signerPublicKey(signer);
  checkSigner(parsed, signer.curve, publicKey);
  const signedTransaction = await withSigningKey(ctx.services.masterKey, signer, (key) => signParsed(parsed, key, publicKey));
  return { signedTransaction };
}

export const signTransactionV2 = defineActivity({
  type: "ACTIVITY_TYPE_SIGN_TRANSACTION_V2",
  // docs/signing.md §4: PRIVATE_KEY / SIGN whatever key signs (upstream's mapping).
  resource: "PRIVATE_KEY",
  action: "SIGN",
  kind: "SIGN_TRANSACTION",
  summary: "Sign an unsigned Ethereum or Solana transaction or a Bitcoin PSBT; policies see it parsed as eth.tx / solana.tx / bitcoin.tx (docs/signing-policies.md §2).",
  params: Params,
  // SDK type v1SignTransactionResult.
  returns: Type.Object({ signedTransaction: Type.String() }),
  policySigner: (p) => p.signWith,
  // Parsed before any policy is consulted: what does not parse is a 400 and nothing is recorded.
  check: (p) => void parseTransaction(p.type, p.unsignedTransaction, p.signWith),
  // docs/signing.md §1: an unknown key (404), one of the wrong curve or one that is no signer
  // of the transaction (400) is refused at submission, before any policy.
  checkSigner: (p, key) => checkSigner(parseTransaction(p.type, p.unsignedTransaction, p.signWith), key.curve, key.publicKey),
  policySigning: (p) => transactionFacts(parseTransaction(p.type, p.unsignedTransaction, p.signWith)),
  execute,
});
