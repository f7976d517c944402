// How many reads another request gets answered while one 256-input PSBT signs
// (docs/benchmarks.md §8.1): a count of answers rather than a time, so a loaded machine
// changes it little.
//
//   node --import tsx bench/reads-during-signing.ts [--engine sqlite|postgres] [--tries 8] [--inputs 256]
//
// In one process (the tests' in-process harness: the app, a scratch store): a private key with
// a P2WPKH address; then, per try, sign_transaction of a fresh PSBT whose inputs all spend
// outputs of that key is sent, and while it is in flight whoami is asked again and again, one
// at a time. Printed: per try, how many whoami answers came back before the signing's answer.
// On SQLite a request waiting for the store's one connection while a transaction holds it
// counts none; one served between the signing's slices counts.
import { randomBytes } from "node:crypto";
import * as btc from "@scure/btc-signer";
import { inproc } from "../test/helpers/inproc.ts";
import { newPrivateKey } from "../test/helpers/keys-and-wallets.ts";
import { num, option } from "./options.ts";

const ENGINE = (option("--engine", "BENCH_ENGINE") ?? "sqlite") as "sqlite" | "postgres";
const TRIES = num("--tries", "BENCH_TRIES", 8, 1, 1000);
const INPUTS = num("--inputs", "BENCH_INPUTS", 256, 1, 256);
const TO = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4";

const h = await inproc(ENGINE);
try {
  const key = await newPrivateKey(h, "CURVE_SECP256K1", ["ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH"]);
  const script = btc.OutScript.encode(btc.Address(btc.NETWORK).decode(key.addresses[0]!.address));
  const psbt = () => {
    const tx = new btc.Transaction();
    for (let i = 0; i < INPUTS; i++) tx.addInput({ txid: randomBytes(32), index: 0, witnessUtxo: { script, amount: 10_000n } });
    tx.addOutputAddress(TO, 1_000n);
    return Buffer.from(tx.toPSBT()).toString("hex");
  };
  const counts: number[] = [];
  for (let t = 0; t < TRIES; t++) {
    let answered = false;
    const signing = h
      .submit("sign_transaction", "ACTIVITY_TYPE_SIGN_TRANSACTION_V2", { signWith: key.privateKeyId, unsignedTransaction: psbt(), type: "TRANSACTION_TYPE_BITCOIN" })
      .then((res) => ((answered = true), res));
    let reads = 0;
    while (!answered) {
      const res = await h.query("whoami", {});
      if (res.status !== 200) throw new Error(`whoami: ${res.status} ${JSON.stringify(res.json)}`);
      if (!answered) reads++;
    }
    const res = await signing;
    if (res.status !== 200 || res.json.activity?.status !== "ACTIVITY_STATUS_COMPLETED") throw new Error(`sign_transaction: ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
    counts.push(reads);
  }
  const sorted = [...counts].sort((a, b) => a - b);
  console.log(`${ENGINE}, ${INPUTS}-input PSBT: whoami answers while it signed, per try: ${counts.join(" ")} (median ${sorted[Math.floor(sorted.length / 2)]})`);
} finally {
  await h.close();
}
