// What signing the largest Bitcoin PSBTs costs the event loop (docs/signing.md §6), in this
// process: for each shape, the CPU time of reading the PSBT (parseBitcoinPsbt, what the check
// before authorization runs) and of signing it with one key (signBitcoinPsbt), and the longest
// time the event loop was held while it signed (a 1 ms ticker's worst lateness). Each round
// builds a fresh PSBT (new outpoints), so no read is a repeat.
//
//   node --import tsx bench/psbt-signing.ts [--rounds N] [--before DIR]
//
// --before DIR: the same shapes signed by DIR's src/signing/parsers/bitcoin.ts (a checkout of
// an earlier commit with node_modules linked), printed next to this tree's.
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as btc from "@scure/btc-signer";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { randomBytes } from "node:crypto";
import { num, option } from "./options.ts";

type Kind = "wpkh" | "tr" | "pkh";
interface Shape {
  name: string;
  inputs: Kind;
  outputs: "wpkh" | "tr";
  outputCount: number;
  derivations?: number;
}
const SHAPES: Shape[] = [
  { name: "256 P2WPKH in, 2 out", inputs: "wpkh", outputs: "wpkh", outputCount: 2 },
  { name: "256 P2TR in (tap_internal_key), 2 out", inputs: "tr", outputs: "wpkh", outputCount: 2 },
  { name: "256 P2WPKH in, 256 P2TR out", inputs: "wpkh", outputs: "tr", outputCount: 256 },
  { name: "256 P2WPKH in, 10 BIP-32 derivations each", inputs: "wpkh", outputs: "wpkh", outputCount: 2, derivations: 10 },
  { name: "256 P2PKH in (non_witness_utxo ~350 B each)", inputs: "pkh", outputs: "wpkh", outputCount: 2 },
];

interface Signer {
  parseBitcoinPsbt(hex: string, network: typeof btc.NETWORK): unknown;
  signBitcoinPsbt(parsed: unknown, priv: Uint8Array, pub: Uint8Array): string | Promise<string>;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Keys for the BIP-32 derivation entries (each entry's key must differ). */
const OTHER_KEYS = Array.from({ length: 16 }, () => secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true));

function build(shape: Shape, pub: Uint8Array): string {
  const tx = new btc.Transaction({ allowUnknownOutputs: true });
  const spk =
    shape.inputs === "tr" ? btc.p2tr(pub.subarray(1)).script : shape.inputs === "wpkh" ? btc.p2wpkh(pub).script : btc.p2pkh(pub).script;
  for (let i = 0; i < 256; i++) {
    if (shape.inputs === "pkh") {
      // A previous transaction of 8 outputs, the key's last: the PSBT is ~120 KB, near the
      // 128 KiB that sign_transaction accepts.
      const prev = new btc.Transaction({ allowUnknownOutputs: true });
      prev.addInput({ txid: randomBytes(32), index: 0 });
      for (let j = 0; j < 7; j++) prev.addOutput({ script: btc.p2wsh(btc.p2pk(pub)).script, amount: 1_000n });
      prev.addOutput({ script: spk, amount: 50_000n });
      tx.addInput({ txid: prev.id, index: 7, nonWitnessUtxo: prev.toBytes(true, false) });
    } else {
      const bip32Derivation = OTHER_KEYS.slice(0, shape.derivations ?? 0).map(
        (k, j) => [k, { fingerprint: j, path: [j] }] as [Uint8Array, { fingerprint: number; path: number[] }],
      );
      tx.addInput({
        txid: randomBytes(32),
        index: i,
        witnessUtxo: { script: spk, amount: 50_000n },
        ...(shape.inputs === "tr" ? { tapInternalKey: pub.subarray(1) } : {}),
        ...(bip32Derivation.length ? { bip32Derivation } : {}),
      });
    }
  }
  const out = shape.outputs === "tr" ? btc.p2tr(pub.subarray(1)).script : btc.p2wpkh(pub).script;
  for (let i = 0; i < shape.outputCount; i++) tx.addOutput({ script: out, amount: 1_000n });
  return Buffer.from(tx.toPSBT()).toString("hex");
}

/** The worst lateness (ms) of a 1 ms interval timer while `work` runs. */
async function heldWhile<T>(work: () => Promise<T>): Promise<{ result: T; heldMs: number }> {
  let last = performance.now();
  let heldMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    heldMs = Math.max(heldMs, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 5));
  last = performance.now();
  try {
    const result = await work();
    heldMs = Math.max(heldMs, performance.now() - last);
    return { result, heldMs };
  } finally {
    clearInterval(timer);
  }
}

async function measure(signer: Signer, shape: Shape, rounds: number) {
  const rows: { parse: number; sign: number; held: number; bytes: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    const priv = secp256k1.utils.randomSecretKey();
    const pub = secp256k1.getPublicKey(priv, true);
    const hex = build(shape, pub);
    let c = cpuMs();
    const parsed = signer.parseBitcoinPsbt(hex, btc.NETWORK);
    const parse = cpuMs() - c;
    c = cpuMs();
    const { heldMs } = await heldWhile(async () => signer.signBitcoinPsbt(parsed, priv, pub));
    rows.push({ parse, sign: cpuMs() - c, held: heldMs, bytes: hex.length / 2 });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return {
    bytes: rows[0]!.bytes,
    parse: median(rows.map((r) => r.parse)),
    sign: median(rows.map((r) => r.sign)),
    held: Math.max(...rows.map((r) => r.held)),
  };
}

const rounds = num("--rounds", "BENCH_ROUNDS", 5, 1, 100);
const before = option("--before", "BENCH_BEFORE");
const load = async (root: string) => (await import(pathToFileURL(path.join(root, "src/signing/parsers/bitcoin.ts")).href)) as Signer;
const trees: [string, Signer][] = [["now", await load(path.resolve(import.meta.dirname, ".."))]];
if (before) trees.push(["before", await load(path.resolve(before))]);

// One unmeasured round per tree first: module loading and the first calls' compilation are
// not what a request costs.
for (const [, signer] of trees) await measure(signer, SHAPES[0]!, 1);
console.log(`PSBT signing, ${rounds} rounds per shape (median CPU ms; held = the longest event-loop block while signing, worst round)`);
console.log(["tree", "shape", "PSBT bytes", "parse ms", "sign ms", "held ms"].join(" | "));
for (const shape of SHAPES) {
  for (const [name, signer] of trees) {
    const m = await measure(signer, shape, name === "before" ? Math.min(rounds, 2) : rounds);
    console.log([name, shape.name, m.bytes, m.parse.toFixed(1), m.sign.toFixed(1), m.held.toFixed(1)].join(" | "));
  }
}
