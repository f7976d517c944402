import { it } from "node:test";
import assert from "node:assert/strict";
import { parseTransaction, recoverTransactionAddress, serializeTransaction, type TransactionSerialized } from "viem";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { Keypair, MessageV0, PublicKey, SystemProgram, Transaction, VersionedTransaction } from "@solana/web3.js";
import { addUsersWithKeys, completed, forbidden, invalidRequest, notFound, perEngine, type Creds, type Harness, type Json } from "../helpers/inproc.ts";
import { ETH, SOL, newWallet } from "./create_wallet.ts";
import { newPrivateKey } from "./create_private_keys.ts";

const OP = "sign_transaction";
const TYPE = "ACTIVITY_TYPE_SIGN_TRANSACTION_V2";
const RESULT = "signTransactionResult";
const BLOCKHASH = new PublicKey(Uint8Array.from({ length: 32 }, (_, i) => i + 1)).toBase58();
const RECIPIENT = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

const sign = (h: Harness, parameters: Json, as?: Creds) => h.submit(OP, TYPE, parameters, as ? { as } : {});
const eip1559 = (to: `0x${string}` = RECIPIENT, value = 1000n) =>
  serializeTransaction({ type: "eip1559", chainId: 8453, nonce: 1, maxFeePerGas: 10n, maxPriorityFeePerGas: 1n, gas: 21_000n, to, value }).slice(2);
const solTransfer = (from: string, to = Keypair.generate().publicKey, lamports = 5000) =>
  Buffer.from(new VersionedTransaction(MessageV0.compile({
    payerKey: new PublicKey(from), recentBlockhash: BLOCKHASH,
    instructions: [SystemProgram.transfer({ fromPubkey: new PublicKey(from), toPubkey: to, lamports })],
  })).serialize()).toString("hex");
const activityCount = async (h: Harness, as: Creds) => ((await h.query("list_activities", {}, { as })).json.activities as Json[]).length;

perEngine("sign_transaction", (h) => {
  it("Ethereum: legacy, EIP-155, EIP-2930, EIP-1559 and EIP-7702 come back signed by the wallet account, without 0x, as viem reads them", async () => {
    const { addresses } = await newWallet(h(), [ETH()]);
    const address = addresses[0]! as `0x${string}`;
    const txs = [
      serializeTransaction({ type: "legacy", nonce: 0, gasPrice: 1n, gas: 21_000n, to: RECIPIENT, value: 1n }),
      serializeTransaction({ type: "legacy", chainId: 137, nonce: 3, gasPrice: 30n, gas: 21_000n, to: RECIPIENT, value: 2n }),
      serializeTransaction({ type: "eip2930", chainId: 1, nonce: 1, gasPrice: 3n, gas: 30_000n, to: RECIPIENT, value: 0n, accessList: [] }),
      `0x${eip1559()}` as const,
      serializeTransaction({ type: "eip7702", chainId: 1, nonce: 2, maxFeePerGas: 5n, maxPriorityFeePerGas: 1n, gas: 90_000n, to: RECIPIENT,
        authorizationList: [{ chainId: 1, address: RECIPIENT, nonce: 3, yParity: 0, r: `0x${"01".repeat(32)}`, s: `0x${"02".repeat(32)}` }] }),
    ];
    for (const unsigned of txs) {
      const { signedTransaction } = completed(await sign(h(), { signWith: address, unsignedTransaction: unsigned.slice(2), type: "TRANSACTION_TYPE_ETHEREUM" }), RESULT);
      assert.match(signedTransaction, /^[0-9a-f]+$/);
      const signed = `0x${signedTransaction}` as TransactionSerialized;
      assert.equal(await recoverTransactionAddress({ serializedTransaction: signed }), address);
      const back = parseTransaction(signed);
      const sent = parseTransaction(unsigned);
      assert.equal(back.to?.toLowerCase(), sent.to?.toLowerCase());
      assert.equal(back.nonce, sent.nonce);
      if (sent.chainId !== undefined) assert.equal(back.chainId, sent.chainId);
    }
  });

  it("Solana: the signature lands in the signer's slot and verifies; a legacy transaction and a private key work too", async () => {
    const { addresses } = await newWallet(h(), [SOL()]);
    const from = addresses[0]!;
    const { signedTransaction } = completed(await sign(h(), { signWith: from, unsignedTransaction: solTransfer(from), type: "TRANSACTION_TYPE_SOLANA" }), RESULT);
    const tx = VersionedTransaction.deserialize(Buffer.from(signedTransaction, "hex"));
    assert.ok(ed25519.verify(tx.signatures[0]!, tx.message.serialize(), base58.decode(from)));

    const key = await newPrivateKey(h(), "CURVE_ED25519", ["ADDRESS_FORMAT_SOLANA"]);
    const keyAddress = key.addresses[0]!.address;
    const legacy = new Transaction({ feePayer: new PublicKey(keyAddress), recentBlockhash: BLOCKHASH })
      .add(SystemProgram.transfer({ fromPubkey: new PublicKey(keyAddress), toPubkey: Keypair.generate().publicKey, lamports: 1 }));
    const unsigned = legacy.serialize({ requireAllSignatures: false, verifySignatures: false }).toString("hex");
    const res = completed(await sign(h(), { signWith: key.privateKeyId, unsignedTransaction: unsigned, type: "TRANSACTION_TYPE_SOLANA" }), RESULT);
    assert.ok(Transaction.from(Buffer.from(res.signedTransaction, "hex")).verifySignatures());
  });

  it("what does not parse, an unsupported chain, the wrong curve or a key that is not a signer: 400, nothing recorded", async () => {
    const org = await h().newOrg("Unparsable");
    const wallet = completed(await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [ETH(), SOL()] }, { as: org }), "createWalletResult");
    const [eth, sol] = wallet.addresses as [string, string];
    const before = await activityCount(h(), org);
    invalidRequest(await sign(h(), { signWith: eth, unsignedTransaction: "deadbeef", type: "TRANSACTION_TYPE_ETHEREUM" }, org), /cannot parse as TRANSACTION_TYPE_ETHEREUM/, ["parameters.unsignedTransaction"]);
    invalidRequest(await sign(h(), { signWith: eth, unsignedTransaction: `${eip1559()}00`, type: "TRANSACTION_TYPE_ETHEREUM" }, org), /trailing/, ["parameters.unsignedTransaction"]);
    invalidRequest(await sign(h(), { signWith: sol, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_SOLANA" }, org), /cannot parse as TRANSACTION_TYPE_SOLANA/);
    invalidRequest(await sign(h(), { signWith: eth, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_TRON" }, org), /not supported/, ["parameters.type"]);
    invalidRequest(await sign(h(), { signWith: eth, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_DOGE" }, org), /type/);
    assert.equal(await activityCount(h(), org), before);
    // Refused once the key is known: a Solana key for an Ethereum transaction (at submission), a key that is not a signer (at execution).
    invalidRequest(await sign(h(), { signWith: sol, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_ETHEREUM" }, org), /CURVE_SECP256K1/, ["parameters.signWith"]);
    const stranger = Keypair.generate().publicKey.toBase58();
    invalidRequest(await sign(h(), { signWith: sol, unsignedTransaction: solTransfer(stranger), type: "TRANSACTION_TYPE_SOLANA" }, org), /not a required signer/, ["parameters.signWith"]);
    notFound(await sign(h(), { signWith: "0x1111111111111111111111111111111111111111", unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_ETHEREUM" }, org), /no wallet account/);
    // Refused inside the activity's transaction: rolled back, nothing recorded either.
    assert.equal(await activityCount(h(), org), before);
  });

  it("policies read eth.tx and solana.tx: allowed for the named recipient, denied otherwise", async () => {
    const org = await h().newOrg("Transaction policies");
    const [member] = await addUsersWithKeys(h(), 1, org);
    const wallet = completed(await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [ETH(), SOL()] }, { as: org }), "createWalletResult");
    const [eth, sol] = wallet.addresses as [string, string];
    const allowedTo = Keypair.generate().publicKey;
    for (const [policyName, condition] of [
      ["recipient", `activity.type == '${TYPE}' && eth.tx.to == '${RECIPIENT}' && eth.tx.value <= 1000 && eth.tx.chain_id == 8453`],
      ["sol recipient", `solana.tx.transfers.count() == 1 && solana.tx.transfers.all(t, t.to == '${allowedTo.toBase58()}' && t.amount < 10000)`],
    ]) {
      completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", { policyName, effect: "EFFECT_ALLOW", condition, consensus: "", notes: "" }, { as: org }), "createPolicyResult");
    }
    completed(await sign(h(), { signWith: eth, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_ETHEREUM" }, member), RESULT);
    forbidden(await sign(h(), { signWith: eth, unsignedTransaction: eip1559("0x0000000000000000000000000000000000000001"), type: "TRANSACTION_TYPE_ETHEREUM" }, member));
    forbidden(await sign(h(), { signWith: eth, unsignedTransaction: eip1559(RECIPIENT, 1001n), type: "TRANSACTION_TYPE_ETHEREUM" }, member));
    completed(await sign(h(), { signWith: sol, unsignedTransaction: solTransfer(sol, allowedTo), type: "TRANSACTION_TYPE_SOLANA" }, member), RESULT);
    forbidden(await sign(h(), { signWith: sol, unsignedTransaction: solTransfer(sol), type: "TRANSACTION_TYPE_SOLANA" }, member));
    forbidden(await sign(h(), { signWith: sol, unsignedTransaction: solTransfer(sol, allowedTo, 10_000), type: "TRANSACTION_TYPE_SOLANA" }, member));
  });

  it("through the official SDK (signTransaction)", async () => {
    const { addresses } = await newWallet(h(), [ETH()]);
    const res = await (await h().sdk()).signTransaction({ signWith: addresses[0]!, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_ETHEREUM" });
    assert.equal(await recoverTransactionAddress({ serializedTransaction: `0x${res.signedTransaction}` as TransactionSerialized }), addresses[0]);
  });
});
