import { it } from "node:test";
import assert from "node:assert/strict";
import { parseTransaction, recoverTransactionAddress, serializeTransaction, type TransactionSerialized } from "viem";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import {
  Keypair,
  LAMPORTS_PER_SOL,
  MessageV0,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  VersionedTransaction,
} from "@solana/web3.js";
import * as btc from "@scure/btc-signer";
import { schnorr, secp256k1 } from "@noble/curves/secp256k1.js";
import {
  addUsersWithKeys,
  completed,
  forbidden,
  invalidRequest,
  notFound,
  perEngine,
  twoOfTwo,
  type Creds,
  type Harness,
  type Json,
} from "../helpers/inproc.ts";
import { ETH, SOL, newPrivateKey, newWallet, openedPrivateKey } from "../helpers/keys-and-wallets.ts";
import { solanaInstructions } from "../helpers/solana-tx.ts";
import { MAX_SOLANA_ACCOUNT_REFERENCES, MAX_SOLANA_INSTRUCTIONS } from "../../src/signing/parsers/solana.ts";

const OP = "sign_transaction";
const TYPE = "ACTIVITY_TYPE_SIGN_TRANSACTION_V2";
const RESULT = "signTransactionResult";
const BLOCKHASH = new PublicKey(Uint8Array.from({ length: 32 }, (_, i) => i + 1)).toBase58();
const RECIPIENT = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

const sign = (h: Harness, parameters: Json, as?: Creds) => h.submit(OP, TYPE, parameters, as ? { as } : {});
const eip1559 = (to: `0x${string}` = RECIPIENT, value = 1000n) =>
  serializeTransaction({
    type: "eip1559",
    chainId: 8453,
    nonce: 1,
    maxFeePerGas: 10n,
    maxPriorityFeePerGas: 1n,
    gas: 21_000n,
    to,
    value,
  }).slice(2);
const solTransfer = (from: string, to = Keypair.generate().publicKey, lamports = 5000) =>
  Buffer.from(
    new VersionedTransaction(
      MessageV0.compile({
        payerKey: new PublicKey(from),
        recentBlockhash: BLOCKHASH,
        instructions: [SystemProgram.transfer({ fromPubkey: new PublicKey(from), toPubkey: to, lamports })],
      }),
    ).serialize(),
  ).toString("hex");
const BTC = (path = "m/84'/0'/0'/0/0"): Json => ({
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path,
  addressFormat: "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH",
});
const BTC_TO = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4";
const txid = (n: number) => n.toString(16).padStart(64, "0");
/** A PSBT (v0, hex) spending `prevouts` (script and value) to `outputs`. */
function psbtOf(
  prevouts: { script: Uint8Array; amount: bigint; tapInternalKey?: Uint8Array }[],
  outputs: { address?: string; script?: Uint8Array; amount: bigint }[],
): string {
  const tx = new btc.Transaction({ allowUnknownOutputs: true, allowUnknownInputs: true });
  prevouts.forEach((p, i) =>
    tx.addInput({
      txid: txid(i + 1),
      index: i,
      witnessUtxo: { script: p.script, amount: p.amount },
      ...(p.tapInternalKey ? { tapInternalKey: p.tapInternalKey } : {}),
    }),
  );
  for (const o of outputs) {
    if (o.address) tx.addOutputAddress(o.address, o.amount);
    else tx.addOutput({ script: o.script!, amount: o.amount });
  }
  return Buffer.from(tx.toPSBT()).toString("hex");
}
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
      serializeTransaction({
        type: "eip7702",
        chainId: 1,
        nonce: 2,
        maxFeePerGas: 5n,
        maxPriorityFeePerGas: 1n,
        gas: 90_000n,
        to: RECIPIENT,
        authorizationList: [{ chainId: 1, address: RECIPIENT, nonce: 3, yParity: 0, r: `0x${"01".repeat(32)}`, s: `0x${"02".repeat(32)}` }],
      }),
    ];
    for (const unsigned of txs) {
      const { signedTransaction } = completed(
        await sign(h(), { signWith: address, unsignedTransaction: unsigned.slice(2), type: "TRANSACTION_TYPE_ETHEREUM" }),
        RESULT,
      );
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
    const { signedTransaction } = completed(
      await sign(h(), { signWith: from, unsignedTransaction: solTransfer(from), type: "TRANSACTION_TYPE_SOLANA" }),
      RESULT,
    );
    const tx = VersionedTransaction.deserialize(Buffer.from(signedTransaction, "hex"));
    assert.ok(ed25519.verify(tx.signatures[0]!, tx.message.serialize(), base58.decode(from)));

    const key = await newPrivateKey(h(), "CURVE_ED25519", ["ADDRESS_FORMAT_SOLANA"]);
    const keyAddress = key.addresses[0]!.address;
    const legacy = new Transaction({ feePayer: new PublicKey(keyAddress), recentBlockhash: BLOCKHASH }).add(
      SystemProgram.transfer({ fromPubkey: new PublicKey(keyAddress), toPubkey: Keypair.generate().publicKey, lamports: 1 }),
    );
    const unsigned = legacy.serialize({ requireAllSignatures: false, verifySignatures: false }).toString("hex");
    const res = completed(
      await sign(h(), { signWith: key.privateKeyId, unsignedTransaction: unsigned, type: "TRANSACTION_TYPE_SOLANA" }),
      RESULT,
    );
    assert.ok(Transaction.from(Buffer.from(res.signedTransaction, "hex")).verifySignatures());
  });

  it("what does not parse, an unsupported chain, the wrong curve or a key that is not a signer: 400, nothing recorded", async () => {
    const org = await h().newOrg("Unparsable");
    const wallet = completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [ETH(), SOL()] }, { as: org }),
      "createWalletResult",
    );
    const [eth, sol] = wallet.addresses as [string, string];
    const before = await activityCount(h(), org);
    invalidRequest(
      await sign(h(), { signWith: eth, unsignedTransaction: "deadbeef", type: "TRANSACTION_TYPE_ETHEREUM" }, org),
      /cannot parse as TRANSACTION_TYPE_ETHEREUM/,
      ["parameters.unsignedTransaction"],
    );
    invalidRequest(
      await sign(h(), { signWith: eth, unsignedTransaction: `${eip1559()}00`, type: "TRANSACTION_TYPE_ETHEREUM" }, org),
      /trailing/,
      ["parameters.unsignedTransaction"],
    );
    invalidRequest(
      await sign(h(), { signWith: sol, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_SOLANA" }, org),
      /cannot parse as TRANSACTION_TYPE_SOLANA/,
    );
    invalidRequest(
      await sign(h(), { signWith: eth, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_TRON" }, org),
      /not supported/,
      ["parameters.type"],
    );
    invalidRequest(await sign(h(), { signWith: eth, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_DOGE" }, org), /type/);
    assert.equal(await activityCount(h(), org), before);
    // Refused once the key is known, at submission: a Solana key for an Ethereum transaction, a key that is not a signer.
    invalidRequest(
      await sign(h(), { signWith: sol, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_ETHEREUM" }, org),
      /CURVE_SECP256K1/,
      ["parameters.signWith"],
    );
    const stranger = Keypair.generate().publicKey.toBase58();
    invalidRequest(
      await sign(h(), { signWith: sol, unsignedTransaction: solTransfer(stranger), type: "TRANSACTION_TYPE_SOLANA" }, org),
      /not a required signer/,
      ["parameters.signWith"],
    );
    notFound(
      await sign(
        h(),
        { signWith: "0x1111111111111111111111111111111111111111", unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_ETHEREUM" },
        org,
      ),
      /no wallet account/,
    );
    assert.equal(await activityCount(h(), org), before);
  });

  it("a key that is no signer of the transaction is a 400 before any policy (not a 403 from the policies)", async () => {
    const org = await h().newOrg("Not a signer");
    const [member] = await addUsersWithKeys(h(), 1, org);
    const wallet = completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [SOL(), BTC()] }, { as: org }),
      "createWalletResult",
    );
    const [sol, bitcoin] = wallet.addresses as [string, string];
    const before = await activityCount(h(), org);
    // The member has no policy allowing anything: a check after authorization would answer 403.
    invalidRequest(
      await sign(
        h(),
        { signWith: sol, unsignedTransaction: solTransfer(Keypair.generate().publicKey.toBase58()), type: "TRANSACTION_TYPE_SOLANA" },
        member,
      ),
      /not a required signer/,
      ["parameters.signWith"],
    );
    const other = btc.p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true));
    invalidRequest(
      await sign(
        h(),
        {
          signWith: bitcoin,
          unsignedTransaction: psbtOf([{ script: other.script, amount: 5000n }], [{ address: BTC_TO, amount: 4000n }]),
          type: "TRANSACTION_TYPE_BITCOIN",
        },
        member,
      ),
      /no input of the PSBT spends an output of this key/,
      ["parameters.signWith"],
    );
    assert.equal(await activityCount(h(), org), before);
  });

  it("Bitcoin: the key's P2WPKH, P2TR (key path) and P2PKH inputs are signed into the PSBT, which finalizes into a valid transaction", async () => {
    const key = await newPrivateKey(h(), "CURVE_SECP256K1", ["ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH"]);
    const pub = secp256k1.getPublicKey(await openedPrivateKey(h(), key.privateKeyId), true);
    const wpkh = btc.p2wpkh(pub);
    const tr = btc.p2tr(pub.subarray(1));
    assert.equal(key.addresses[0]!.address, wpkh.address);
    // Someone else's input stays unsigned; the key's own are signed.
    const stranger = btc.p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true));
    const unsigned = psbtOf(
      [
        { script: wpkh.script, amount: 10_000n },
        { script: tr.script, amount: 20_000n },
        { script: stranger.script, amount: 1_000n },
      ],
      [
        { address: BTC_TO, amount: 25_000n },
        { script: btc.Script.encode(["RETURN", new Uint8Array([1, 2])]), amount: 0n },
      ],
    );
    const { signedTransaction } = completed(
      await sign(h(), { signWith: key.privateKeyId, unsignedTransaction: unsigned, type: "TRANSACTION_TYPE_BITCOIN" }),
      RESULT,
    );
    assert.match(signedTransaction, /^[0-9a-f]+$/);
    const signed = btc.Transaction.fromPSBT(Buffer.from(signedTransaction, "hex"), { allowUnknownOutputs: true, allowUnknownInputs: true });
    assert.equal(signed.isFinal, false, "returned unfinalized, as upstream");
    const [sig0] = signed.getInput(0).partialSig!;
    assert.deepEqual(sig0![0], pub);
    assert.equal(sig0![1].at(-1), btc.SigHash.ALL);
    assert.equal(signed.getInput(1).tapKeySig?.length, 64, "SIGHASH_DEFAULT Schnorr signature");
    assert.equal(signed.getInput(2).partialSig, undefined);
    // The signatures check against the sighashes the library computes.
    const sighash0 = signed.preimageWitnessV0(0, btc.p2pkh(pub).script, btc.SigHash.ALL, 10_000n);
    assert.ok(secp256k1.verify(sig0![1].subarray(0, -1), sighash0, pub, { prehash: false, format: "der" }));
    const prevScripts = [wpkh.script, tr.script, stranger.script];
    const sighash1 = signed.preimageWitnessV1(1, prevScripts, btc.SigHash.DEFAULT, [10_000n, 20_000n, 1_000n]);
    assert.ok(schnorr.verify(signed.getInput(1).tapKeySig!, sighash1, tr.tweakedPubkey));
    signed.finalizeIdx(0);
    signed.finalizeIdx(1);

    // P2PKH needs the previous transaction (non_witness_utxo).
    const prev = new btc.Transaction();
    prev.addInput({ txid: txid(9), index: 0 });
    prev.addOutputAddress(btc.p2pkh(pub).address!, 7_000n);
    const legacy = new btc.Transaction();
    legacy.addInput({ txid: prev.id, index: 0, nonWitnessUtxo: prev.toBytes(true, false) });
    legacy.addOutputAddress(BTC_TO, 6_000n);
    const res = completed(
      await sign(h(), {
        signWith: key.privateKeyId,
        unsignedTransaction: Buffer.from(legacy.toPSBT()).toString("hex"),
        type: "TRANSACTION_TYPE_BITCOIN",
      }),
      RESULT,
    );
    const legacySigned = btc.Transaction.fromPSBT(Buffer.from(res.signedTransaction, "hex"));
    legacySigned.finalize();
    assert.ok(legacySigned.extract().length > 100);
  });

  // docs/signing.md §6: a submission the policies allow is signed before its transaction; one
  // that awaits consensus is signed by the approval that executes it, in that transaction.
  it("Bitcoin: a PSBT awaiting a second approval is signed when the approval executes it", async () => {
    const { a, b } = await twoOfTwo(h());
    const approve = async (activity: Json) =>
      h().submit(
        "approve_activity",
        "ACTIVITY_TYPE_APPROVE_ACTIVITY",
        { fingerprint: (activity as { fingerprint: string }).fingerprint },
        { as: b },
      );
    const keyRes = await h().submit(
      "create_private_keys",
      "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2",
      {
        privateKeys: [
          {
            privateKeyName: "btc",
            curve: "CURVE_SECP256K1",
            privateKeyTags: [],
            addressFormats: ["ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH"],
          },
        ],
      },
      { as: a },
    );
    assert.equal(keyRes.json.activity?.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED", JSON.stringify(keyRes.json));
    const key = completed(await approve(keyRes.json.activity), "createPrivateKeysResultV2").privateKeys[0] as {
      privateKeyId: string;
      addresses: { address: string }[];
    };
    const script = btc.OutScript.encode(btc.Address(btc.NETWORK).decode(key.addresses[0]!.address));
    const inputs = Array.from({ length: 3 }, () => ({ script, amount: 10_000n }));
    const unsigned = psbtOf(inputs, [{ address: BTC_TO, amount: 29_000n }]);
    const pending = await sign(h(), { signWith: key.privateKeyId, unsignedTransaction: unsigned, type: "TRANSACTION_TYPE_BITCOIN" }, a);
    assert.equal(pending.json.activity?.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED", JSON.stringify(pending.json));
    assert.equal(pending.json.activity.result?.signTransactionResult, undefined);
    const { signedTransaction } = completed(await approve(pending.json.activity), RESULT);
    const signed = btc.Transaction.fromPSBT(Buffer.from(signedTransaction, "hex"), { allowUnknownOutputs: true });
    for (let i = 0; i < inputs.length; i++) {
      const [[pub, sig]] = signed.getInput(i).partialSig! as [[Uint8Array, Uint8Array]];
      assert.deepEqual(btc.p2wpkh(pub).script, script);
      const sighash = signed.preimageWitnessV0(i, btc.p2pkh(pub).script, btc.SigHash.ALL, 10_000n);
      assert.ok(secp256k1.verify(sig.subarray(0, -1), sighash, pub, { prehash: false, format: "der" }), `input ${i}`);
    }
  });

  it("Bitcoin: what cannot be read or signed is a 400 naming it", async () => {
    const { addresses } = await newWallet(h(), [BTC()]);
    const from = addresses[0]!;
    const script = btc.OutScript.encode(btc.Address(btc.NETWORK).decode(from));
    const bad = (unsignedTransaction: string, pattern: RegExp, field = "parameters.unsignedTransaction") =>
      sign(h(), { signWith: from, unsignedTransaction, type: "TRANSACTION_TYPE_BITCOIN" }).then((r) => invalidRequest(r, pattern, [field]));
    await bad("deadbeef", /not a PSBT/);
    await bad(Buffer.from("psbt").toString("base64"), /not hex|not a PSBT/);
    await bad(psbtOf([{ script, amount: 1_000n }], [{ address: BTC_TO, amount: 2_000n }]), /exceed the inputs/);
    // Spending without the prevout: the value (and the fee) are unknown.
    const noUtxo = new btc.Transaction();
    noUtxo.addInput({ txid: txid(1), index: 0 });
    noUtxo.addOutputAddress(BTC_TO, 1n);
    await bad(Buffer.from(noUtxo.toPSBT()).toString("hex"), /neither witness_utxo nor non_witness_utxo/);
    // A sighash type other than the default.
    const single = new btc.Transaction({ allowUnknownOutputs: true });
    single.addInput({ txid: txid(1), index: 0, witnessUtxo: { script, amount: 5_000n }, sighashType: btc.SigHash.SINGLE });
    single.addOutputAddress(BTC_TO, 4_000n);
    await bad(Buffer.from(single.toPSBT()).toString("hex"), /sighash type 3/);
  });

  it("bitcoin.tx: policies read outputs, inputs, fee and locktime", async () => {
    const org = await h().newOrg("Bitcoin policies");
    const [member] = await addUsersWithKeys(h(), 1, org);
    const wallet = completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [BTC()] }, { as: org }),
      "createWalletResult",
    );
    const from = wallet.addresses[0] as string;
    const script = btc.OutScript.encode(btc.Address(btc.NETWORK).decode(from));
    const condition = `bitcoin.tx.outputs.all(o, o.address == '${BTC_TO}' && o.value < 200000 && o.address_type == 'P2WPKH') && bitcoin.tx.fee <= 1000 && bitcoin.tx.inputs.all(i, i.tx_id == '${txid(1)}' && i.vout == 0) && bitcoin.tx.locktime.type == 'Blocks' && bitcoin.tx.version == '2'`;
    completed(
      await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        { policyName: "btc", effect: "EFFECT_ALLOW", condition, consensus: "", notes: "" },
        { as: org },
      ),
      "createPolicyResult",
    );
    const to = (address: string, amount: bigint, input = 10_000n) => psbtOf([{ script, amount: input }], [{ address, amount }]);
    completed(
      await sign(h(), { signWith: from, unsignedTransaction: to(BTC_TO, 9_500n), type: "TRANSACTION_TYPE_BITCOIN" }, member),
      RESULT,
    );
    forbidden(await sign(h(), { signWith: from, unsignedTransaction: to(from, 9_500n), type: "TRANSACTION_TYPE_BITCOIN" }, member));
    // A fee above 1000 sat; an output of 200000 sat or more.
    forbidden(await sign(h(), { signWith: from, unsignedTransaction: to(BTC_TO, 8_000n), type: "TRANSACTION_TYPE_BITCOIN" }, member));
    forbidden(
      await sign(h(), { signWith: from, unsignedTransaction: to(BTC_TO, 209_500n, 210_000n), type: "TRANSACTION_TYPE_BITCOIN" }, member),
    );
  });

  it("policies read eth.tx and solana.tx: allowed for the named recipient, denied otherwise", async () => {
    const org = await h().newOrg("Transaction policies");
    const [member] = await addUsersWithKeys(h(), 1, org);
    const wallet = completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [ETH(), SOL()] }, { as: org }),
      "createWalletResult",
    );
    const [eth, sol] = wallet.addresses as [string, string];
    const allowedTo = Keypair.generate().publicKey;
    for (const [policyName, condition] of [
      ["recipient", `activity.type == '${TYPE}' && eth.tx.to == '${RECIPIENT}' && eth.tx.value <= 1000 && eth.tx.chain_id == 8453`],
      [
        "sol recipient",
        `solana.tx.transfers.count() == 1 && solana.tx.transfers.all(t, t.to == '${allowedTo.toBase58()}' && t.amount < 10000)`,
      ],
    ]) {
      completed(
        await h().submit(
          "create_policy",
          "ACTIVITY_TYPE_CREATE_POLICY_V3",
          { policyName, effect: "EFFECT_ALLOW", condition, consensus: "", notes: "" },
          { as: org },
        ),
        "createPolicyResult",
      );
    }
    completed(await sign(h(), { signWith: eth, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_ETHEREUM" }, member), RESULT);
    forbidden(
      await sign(
        h(),
        { signWith: eth, unsignedTransaction: eip1559("0x0000000000000000000000000000000000000001"), type: "TRANSACTION_TYPE_ETHEREUM" },
        member,
      ),
    );
    forbidden(
      await sign(h(), { signWith: eth, unsignedTransaction: eip1559(RECIPIENT, 1001n), type: "TRANSACTION_TYPE_ETHEREUM" }, member),
    );
    completed(
      await sign(h(), { signWith: sol, unsignedTransaction: solTransfer(sol, allowedTo), type: "TRANSACTION_TYPE_SOLANA" }, member),
      RESULT,
    );
    forbidden(await sign(h(), { signWith: sol, unsignedTransaction: solTransfer(sol), type: "TRANSACTION_TYPE_SOLANA" }, member));
    forbidden(
      await sign(h(), { signWith: sol, unsignedTransaction: solTransfer(sol, allowedTo, 10_000), type: "TRANSACTION_TYPE_SOLANA" }, member),
    );
  });

  it("Solana: 512 instructions are signed; 513, or more than 2,048 account references in all, are a 400 naming unsignedTransaction, nothing recorded", async () => {
    const org = await h().newOrg("Solana counts");
    const wallet = completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [SOL()] }, { as: org }),
      "createWalletResult",
    );
    const sol = wallet.addresses[0] as string;
    const { signedTransaction } = completed(
      await sign(
        h(),
        { signWith: sol, unsignedTransaction: solanaInstructions(sol, MAX_SOLANA_INSTRUCTIONS, 4), type: "TRANSACTION_TYPE_SOLANA" },
        org,
      ),
      RESULT,
    );
    // One slot (the shortvec byte), then the message (web3.js reads no transaction past a packet).
    const signed = Buffer.from(signedTransaction, "hex");
    assert.ok(ed25519.verify(signed.subarray(1, 65), signed.subarray(65), base58.decode(sol)));
    const before = await activityCount(h(), org);
    invalidRequest(
      await sign(
        h(),
        { signWith: sol, unsignedTransaction: solanaInstructions(sol, MAX_SOLANA_INSTRUCTIONS + 1), type: "TRANSACTION_TYPE_SOLANA" },
        org,
      ),
      /cannot parse as TRANSACTION_TYPE_SOLANA: the transaction has 513 instructions; at most 512/,
      ["parameters.unsignedTransaction"],
    );
    invalidRequest(
      await sign(
        h(),
        {
          signWith: sol,
          unsignedTransaction: solanaInstructions(sol, 2, MAX_SOLANA_ACCOUNT_REFERENCES / 2 + 1),
          type: "TRANSACTION_TYPE_SOLANA",
        },
        org,
      ),
      /more than 2048 accounts in all/,
      ["parameters.unsignedTransaction"],
    );
    assert.equal(await activityCount(h(), org), before);
  });

  it("Solana facts describe instructions as the programs run them: a transfer with trailing data, CreateAccount and CloseAccount are transfers; an unknown System tag is a 400 naming the instruction", async () => {
    const org = await h().newOrg("Solana instructions");
    const [member] = await addUsersWithKeys(h(), 1, org);
    const wallet = completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [SOL()] }, { as: org }),
      "createWalletResult",
    );
    const sol = wallet.addresses[0] as string;
    const me = new PublicKey(sol),
      a = Keypair.generate().publicKey,
      b = Keypair.generate().publicKey;
    const condition = `solana.tx.transfers.all(t, t.to == '${a.toBase58()}') && solana.tx.spl_transfers.all(t, t.to == '${a.toBase58()}')`;
    completed(
      await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        { policyName: "only A", effect: "EFFECT_ALLOW", condition, consensus: "", notes: "" },
        { as: org },
      ),
      "createPolicyResult",
    );
    const solTx = (...instructions: TransactionInstruction[]) =>
      Buffer.from(
        new VersionedTransaction(MessageV0.compile({ payerKey: me, recentBlockhash: BLOCKHASH, instructions })).serialize(),
      ).toString("hex");
    /** A System transfer of 5 SOL with one 00 byte after its 12 bytes: the System program ignores it and moves the lamports. */
    const padded = (to: PublicKey) => {
      const ix = SystemProgram.transfer({ fromPubkey: me, toPubkey: to, lamports: 5n * BigInt(LAMPORTS_PER_SOL) });
      return new TransactionInstruction({ programId: ix.programId, keys: ix.keys, data: Buffer.concat([ix.data, Buffer.of(0)]) });
    };
    completed(await sign(h(), { signWith: sol, unsignedTransaction: solTx(padded(a)), type: "TRANSACTION_TYPE_SOLANA" }, member), RESULT);
    forbidden(await sign(h(), { signWith: sol, unsignedTransaction: solTx(padded(b)), type: "TRANSACTION_TYPE_SOLANA" }, member));
    // CreateAccount moves its lamports to the new account; CloseAccount a token account's lamports to its destination.
    forbidden(
      await sign(
        h(),
        {
          signWith: sol,
          unsignedTransaction: solTx(
            SystemProgram.createAccount({
              fromPubkey: me,
              newAccountPubkey: b,
              lamports: 5 * LAMPORTS_PER_SOL,
              space: 0,
              programId: SystemProgram.programId,
            }),
          ),
          type: "TRANSACTION_TYPE_SOLANA",
        },
        member,
      ),
    );
    const token = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
    const close = (to: PublicKey) =>
      new TransactionInstruction({
        programId: token,
        data: Buffer.of(9),
        keys: [
          { pubkey: Keypair.generate().publicKey, isSigner: false, isWritable: true },
          { pubkey: to, isSigner: false, isWritable: true },
          { pubkey: me, isSigner: true, isWritable: false },
        ],
      });
    forbidden(await sign(h(), { signWith: sol, unsignedTransaction: solTx(close(b)), type: "TRANSACTION_TYPE_SOLANA" }, member));
    completed(await sign(h(), { signWith: sol, unsignedTransaction: solTx(close(a)), type: "TRANSACTION_TYPE_SOLANA" }, member), RESULT);
    // A System instruction the program has no tag for: refused before any policy, nothing recorded.
    const before = await activityCount(h(), org);
    const unknownTag = new TransactionInstruction({
      programId: SystemProgram.programId,
      data: Buffer.of(99, 0, 0, 0),
      keys: [{ pubkey: me, isSigner: true, isWritable: true }],
    });
    invalidRequest(
      await sign(h(), { signWith: sol, unsignedTransaction: solTx(padded(a), unknownTag), type: "TRANSACTION_TYPE_SOLANA" }, member),
      /cannot parse as TRANSACTION_TYPE_SOLANA: instruction 1: System instruction 99 is not one Sigil can show to a policy/,
      ["parameters.unsignedTransaction"],
    );
    assert.equal(await activityCount(h(), org), before);
  });

  it("through the official SDK (signTransaction)", async () => {
    const { addresses } = await newWallet(h(), [ETH()]);
    const res = await (
      await h().sdk()
    ).signTransaction({ signWith: addresses[0]!, unsignedTransaction: eip1559(), type: "TRANSACTION_TYPE_ETHEREUM" });
    assert.equal(
      await recoverTransactionAddress({ serializedTransaction: `0x${res.signedTransaction}` as TransactionSerialized }),
      addresses[0],
    );
  });
});
