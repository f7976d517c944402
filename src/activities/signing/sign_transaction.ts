import { Type, type Static } from "@sinclair/typebox";
import { signerInTransaction, signerPublicKey, withSigningKey } from "../../signing/resolve.ts";
import { SignWith } from "../../signing/schema.ts";
import {
  checkSigner,
  parseTransaction,
  parseTransactionOffThread,
  signParsed,
  transactionFacts,
  TRANSACTION_TYPES,
} from "../../signing/transaction.ts";
import { defineActivity, type ExecuteContext, type PrepareContext } from "../define.ts";
import type { SigningCurve } from "../../signing/sign.ts";

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
  type: Type.Union(
    TRANSACTION_TYPES.map((t) => Type.Literal(t)),
    { errorMessage: `must be one of ${TRANSACTION_TYPES.join(", ")}` },
  ),
});

/**
 * One parse per request: the submission reads the transaction for the signer check, the policy
 * facts, the early signature and the execution, all from the same parameters object, and a
 * large PSBT's parse is one synchronous block (docs/signing.md §6). Signing builds a new
 * transaction and leaves the parsed one as it was, so it can be shared.
 */
const parsedOnce = new WeakMap<object, ReturnType<typeof parseTransaction>>();
function parsed(p: Static<typeof Params>): ReturnType<typeof parseTransaction> {
  let t = parsedOnce.get(p);
  if (!t) parsedOnce.set(p, (t = parseTransaction(p.type, p.unsignedTransaction, p.signWith)));
  return t;
}

/**
 * A PSBT is read on the PSBT thread at submission (`admit`, before the signer check and the
 * policies), so the hooks after it find it parsed and the main thread never reads it
 * (docs/signing.md §6). The other chains are parsed by `check`, as before.
 */
async function parsedOffThread(p: Static<typeof Params>): Promise<void> {
  if (!parsedOnce.has(p)) parsedOnce.set(p, await parseTransactionOffThread(p.type, p.unsignedTransaction, p.signWith));
}
const readOffThread = (p: Static<typeof Params>) => p.type === "TRANSACTION_TYPE_BITCOIN";

/** What submission signed before the transaction, and with which key. */
interface Presigned {
  curve: SigningCurve;
  publicKey: string;
  signedTransaction: string;
}

/**
 * Signs at submission, once the policies allowed it, before the activity's transaction opens
 * (docs/signing.md §6): on SQLite that transaction holds the store's one connection, and a
 * large PSBT's signing slices would keep every other request's reads waiting. An approval
 * prepares nothing (`{}`): the transaction signs then, as it may not execute at all.
 */
async function prepare(ctx: PrepareContext, p: Static<typeof Params>, when: "submission" | "approval"): Promise<{ presigned?: Presigned }> {
  if (when !== "submission" || !ctx.signer) {
    // Before an approval's transaction: the PSBT read on the PSBT thread, where the policy
    // facts in the transaction find it (docs/signing.md §6).
    if (readOffThread(p)) await parsedOffThread(p);
    return {};
  }
  const tx = parsed(p);
  const publicKey = signerPublicKey(ctx.signer);
  checkSigner(tx, ctx.signer.curve, publicKey);
  const signedTransaction = await withSigningKey(ctx.services.masterKey, ctx.signer, (key) => signParsed(tx, key, publicKey));
  return { presigned: { curve: ctx.signer.curve, publicKey, signedTransaction } };
}

async function execute(ctx: ExecuteContext<{ presigned?: Presigned }>, p: Static<typeof Params>) {
  const tx = parsed(p);
  const signer = await signerInTransaction(ctx, p.signWith);
  const publicKey = signerPublicKey(signer);
  checkSigner(tx, signer.curve, publicKey);
  // The signature made before this transaction stands only if signWith still names that key
  // here; otherwise (a key deleted and another found meanwhile) this one signs.
  const pre = ctx.prepared?.presigned;
  if (pre && pre.curve === signer.curve && pre.publicKey === publicKey) return { signedTransaction: pre.signedTransaction };
  const signedTransaction = await withSigningKey(ctx.services.masterKey, signer, (key) => signParsed(tx, key, publicKey));
  return { signedTransaction };
}

export const signTransactionV2 = defineActivity({
  type: "ACTIVITY_TYPE_SIGN_TRANSACTION_V2",
  // docs/signing.md §4: PRIVATE_KEY / SIGN whatever key signs (upstream's mapping).
  resource: "PRIVATE_KEY",
  action: "SIGN",
  kind: "SIGN_TRANSACTION",
  summary:
    "Sign an unsigned Ethereum or Solana transaction or a Bitcoin PSBT; policies see it parsed as eth.tx / solana.tx / bitcoin.tx (docs/signing-policies.md §2).",
  params: Params,
  // SDK type v1SignTransactionResult.
  returns: Type.Object({ signedTransaction: Type.String() }),
  policySigner: (p) => p.signWith,
  // Parsed before any policy is consulted: what does not parse is a 400 and nothing is recorded.
  check: (p) => void (readOffThread(p) ? undefined : parsed(p)),
  admit: async (p) => {
    if (readOffThread(p)) await parsedOffThread(p);
  },
  // docs/signing.md §1: an unknown key (404), one of the wrong curve or one that is no signer
  // of the transaction (400) is refused at submission, before any policy.
  checkSigner: (p, key) => checkSigner(parsed(p), key.curve, key.publicKey),
  policySigning: (p) => transactionFacts(parsed(p)),
  prepare,
  execute,
});
