// Bitcoin PSBT signing held to @scure/btc-signer (docs/signing.md §6): the sighashes computed
// once per transaction give the library's ECDSA signatures byte for byte (P2WPKH, P2PKH) and
// Schnorr signatures that verify against its BIP-341 sighash; signatures land in the PSBT's own
// bytes (a signature of the same key replaced, everything else kept); the output facts equal
// what the library's script decoder says; P2PKH work past the bound is refused.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import * as btc from "@scure/btc-signer";
import { schnorr, secp256k1 } from "@noble/curves/secp256k1.js";
import { MAX_LEGACY_SIGHASH_BYTES, networkOf, parseBitcoinPsbt, signBitcoinPsbt } from "../../src/signing/parsers/bitcoin.ts";
import { outputFacts } from "../../src/signing/parsers/bitcoin-outputs.ts";
import { ParseError } from "../../src/signing/parsers/errors.ts";

const OPTS = { allowUnknownOutputs: true, allowUnknownInputs: true, allowUnknownVersion: true } as const;
const MAINNET = networkOf("bc1q");
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const newKey = () => {
  const priv = secp256k1.utils.randomSecretKey();
  return { priv, pub: secp256k1.getPublicKey(priv, true) };
};

type Kind = "wpkh" | "pkh" | "tr" | "foreign";

/** A PSBT of `kinds` inputs of the key (a foreign one is another key's P2WPKH). */
function psbtOf(pub: Uint8Array, kinds: Kind[], opts: { version?: number; lockTime?: number; outputs?: number } = {}) {
  const other = newKey().pub;
  const prev = new btc.Transaction();
  prev.addInput({ txid: "11".repeat(32), index: 0 });
  prev.addOutput({ script: btc.p2pkh(other).script, amount: 1_000n });
  prev.addOutput({ script: btc.p2pkh(pub).script, amount: 50_000n });
  const prevRaw = prev.toBytes(true, false);
  const tx = new btc.Transaction({ ...OPTS, version: opts.version ?? 2, lockTime: opts.lockTime ?? 0 });
  kinds.forEach((k, i) => {
    const sequence = i % 2 ? { sequence: 0xfffffffd } : {};
    if (k === "pkh") return void tx.addInput({ txid: prev.id, index: 1, nonWitnessUtxo: prevRaw, ...sequence });
    const script = k === "wpkh" ? btc.p2wpkh(pub).script : k === "tr" ? btc.p2tr(pub.subarray(1)).script : btc.p2wpkh(other).script;
    tx.addInput({ txid: hex(randomBytes(32)), index: i, witnessUtxo: { script, amount: BigInt(10_000 + i) }, ...sequence });
  });
  for (let i = 0; i < (opts.outputs ?? 1); i++) tx.addOutputAddress(btc.p2wpkh(other).address!, 9_000n);
  tx.addOutput({ script: Uint8Array.of(0x6a, 2, 1, 2), amount: 0n });
  return tx;
}

const prevoutsOf = (tx: btc.Transaction) =>
  Array.from({ length: tx.inputsLength }, (_, i) => {
    const input = tx.getInput(i);
    return input.witnessUtxo ?? input.nonWitnessUtxo!.outputs[input.index!]!;
  });

describe("Bitcoin PSBT signing", () => {
  it("ECDSA signatures equal @scure/btc-signer's byte for byte, Schnorr ones verify; other inputs untouched; the result finalizes", async () => {
    for (let round = 0; round < 12; round++) {
      const { priv, pub } = newKey();
      const kinds = Array.from({ length: 9 }, (_, i) => (["wpkh", "pkh", "tr", "foreign"] as const)[(i + round) % 4]!);
      const tx = psbtOf(pub, kinds, { version: 1 + (round % 3), lockTime: round * 1_000, outputs: 1 + (round % 3) });
      const unsigned = hex(tx.toPSBT());
      const signed = btc.Transaction.fromPSBT(
        Buffer.from(await signBitcoinPsbt(parseBitcoinPsbt(unsigned, MAINNET), priv, pub), "hex"),
        OPTS,
      );
      const ref = btc.Transaction.fromPSBT(Buffer.from(unsigned, "hex"), OPTS);
      const prevouts = prevoutsOf(ref);
      kinds.forEach((k, i) => {
        const input = signed.getInput(i);
        if (k === "foreign") return assert.deepEqual(input, ref.getInput(i));
        if (k === "tr") {
          const sighash = ref.preimageWitnessV1(
            i,
            prevouts.map((p) => p.script),
            btc.SigHash.DEFAULT,
            prevouts.map((p) => p.amount),
          );
          assert.ok(schnorr.verify(input.tapKeySig!, sighash, btc.p2tr(pub.subarray(1)).tweakedPubkey), `input ${i}`);
          assert.deepEqual(input.tapInternalKey, pub.subarray(1));
          return;
        }
        ref.signIdx(priv, i);
        assert.deepEqual(input.partialSig, ref.getInput(i).partialSig, `input ${i} (${k})`);
      });
      kinds.forEach((k, i) => k !== "foreign" && signed.finalizeIdx(i));
    }
  });

  it("a signature already there for the key is replaced, not doubled; another key's stays", async () => {
    const { priv, pub } = newKey();
    const other = newKey();
    const tx = psbtOf(pub, ["wpkh", "tr"]);
    tx.updateInput(
      0,
      {
        partialSig: [
          [other.pub, Uint8Array.of(0x30, 1, 2)],
          [pub, Uint8Array.of(0x30, 3, 4)],
        ],
      },
      true,
    );
    // Pairs the read skips (docs/signing.md §6) come back as sent.
    tx.updateInput(0, { bip32Derivation: [[other.pub, { fingerprint: 7, path: [1, 2] }]] }, true);
    tx.updateInput(1, { tapKeySig: new Uint8Array(64).fill(7), tapInternalKey: pub.subarray(1) }, true);
    const signed = btc.Transaction.fromPSBT(
      Buffer.from(await signBitcoinPsbt(parseBitcoinPsbt(hex(tx.toPSBT()), MAINNET), priv, pub), "hex"),
      OPTS,
    );
    const sigs = signed.getInput(0).partialSig!;
    assert.equal(sigs.length, 2);
    assert.deepEqual(sigs.find(([k]) => hex(k) === hex(other.pub))![1], Uint8Array.of(0x30, 1, 2));
    assert.notDeepEqual(sigs.find(([k]) => hex(k) === hex(pub))![1], Uint8Array.of(0x30, 3, 4));
    assert.notDeepEqual(signed.getInput(1).tapKeySig, new Uint8Array(64).fill(7));
    assert.deepEqual(signed.getInput(0).bip32Derivation, [[other.pub, { fingerprint: 7, path: [1, 2] }]]);
    signed.finalize();
  });

  it("a PSBT whose framing is cut short or runs on is refused as not a PSBT", () => {
    const whole = hex(psbtOf(newKey().pub, ["wpkh"]).toPSBT());
    for (const bad of [whole.slice(0, -4), `${whole}00`]) assert.throws(() => parseBitcoinPsbt(bad, MAINNET), /not a PSBT/);
  });

  it("a non_witness_utxo that is not the transaction the input names is refused", () => {
    const { pub } = newKey();
    const tx = psbtOf(pub, ["pkh"]);
    const previous = hex(tx.getInput(0).nonWitnessUtxo ? btc.RawTx.encode(tx.getInput(0).nonWitnessUtxo!) : new Uint8Array());
    const whole = hex(tx.toPSBT());
    assert.ok(previous.length > 0 && whole.includes(previous));
    // Another version: other bytes, another txid.
    const forged = whole.replace(previous, `03${previous.slice(2)}`);
    assert.throws(() => parseBitcoinPsbt(forged, MAINNET), /non_witness_utxo is not the transaction/);
  });

  it("P2PKH inputs whose digests would hash more than MAX_LEGACY_SIGHASH_BYTES are refused before signing", async () => {
    const { priv, pub } = newKey();
    // 256 P2PKH inputs and 256 outputs: each digest hashes the ~18 KB transaction, 256 × 18 KB > 4 MiB.
    const parsed = parseBitcoinPsbt(hex(psbtOf(pub, Array(256).fill("pkh"), { outputs: 255 }).toPSBT()), MAINNET);
    await assert.rejects(
      signBitcoinPsbt(parsed, priv, pub),
      (err: Error) => err instanceof ParseError && err.message.includes(String(MAX_LEGACY_SIGHASH_BYTES)),
    );
    // 128 of them (about 2 MiB) are signed.
    const half = psbtOf(pub, Array(128).fill("pkh"), { outputs: 255 });
    const signed = btc.Transaction.fromPSBT(
      Buffer.from(await signBitcoinPsbt(parseBitcoinPsbt(hex(half.toPSBT()), MAINNET), priv, pub), "hex"),
      OPTS,
    );
    signed.finalize();
  });

  it("output facts equal what @scure/btc-signer's script decoder says, for the standard templates with valid and invalid keys", () => {
    const reference = (script: Uint8Array) => {
      const types: Record<string, string> = {
        pkh: "P2PKH",
        sh: "P2SH",
        wpkh: "P2WPKH",
        wsh: "P2WSH",
        tr: "P2TR",
        pk: "P2PK",
        ms: "P2MS",
        p2a: "P2A",
      };
      const d = btc.OutScript.decode(script);
      let type = types[d.type] ?? (script[0] === 0x6a ? "OP_RETURN" : "UNKNOWN");
      if (
        type === "UNKNOWN" &&
        script.length >= 4 &&
        script.length <= 42 &&
        script[0]! >= 0x51 &&
        script[0]! <= 0x60 &&
        script[1] === script.length - 2
      )
        type = "WITNESS_UNKNOWN";
      const address = ["pkh", "sh", "wpkh", "wsh", "tr"].includes(d.type)
        ? btc.Address(MAINNET).encode(d as Parameters<ReturnType<typeof btc.Address>["encode"]>[0])
        : "";
      return { value: 5n, script_pubkey: hex(script), address, address_type: type };
    };
    const push = (b: Uint8Array) => Buffer.concat([Uint8Array.of(b.length), b]);
    const scripts: Uint8Array[] = [];
    for (let i = 0; i < 20; i++) {
      const pub = newKey().pub;
      const wide = secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), false);
      const keys = Array.from({ length: 1 + (i % 3) }, (_, j) => (j % 2 ? wide : newKey().pub));
      const m = 1 + (i % keys.length);
      scripts.push(
        btc.p2pkh(pub).script,
        btc.p2wpkh(pub).script,
        btc.p2tr(pub.subarray(1)).script,
        btc.p2sh(btc.p2wpkh(pub)).script,
        btc.p2wsh(btc.p2pk(pub)).script,
        btc.p2pk(pub).script,
        btc.p2pk(wide).script,
        btc.p2ms(m, keys).script,
        Buffer.concat([Uint8Array.of(0x50 + keys.length + 1), ...keys.map(push), Uint8Array.of(0x50 + keys.length, 0xae)]), // m > n
        Buffer.concat([Uint8Array.of(0x51, 0x20), randomBytes(32)]), // a v1 program, on the curve or not
        Buffer.concat([Uint8Array.of(0x52, 0x20), randomBytes(32)]),
        Buffer.concat([Uint8Array.of(0x60, 0x28), randomBytes(40)]),
        Buffer.concat([push(randomBytes(33)), Uint8Array.of(0xac)]),
        Buffer.concat([push(Buffer.concat([Uint8Array.of(2), randomBytes(32)])), Uint8Array.of(0xac)]),
        Buffer.concat([push(pub.subarray(1)), Uint8Array.of(0xac)]),
        Uint8Array.of(0x51, 2, 0x4e, 0x73),
        Uint8Array.of(0x6a, 1, 7),
        Uint8Array.of(0x51),
      );
    }
    for (const script of scripts) assert.deepEqual(outputFacts(script, 5n, MAINNET), reference(script), hex(script));
    // A script that does not even decode (a push past its end) is UNKNOWN, not an error.
    assert.equal(outputFacts(Uint8Array.of(0x00, 0x14, 1, 2), 5n, MAINNET).address_type, "UNKNOWN");
  });
});
