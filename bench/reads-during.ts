// How many reads another request gets answered while one heavy request runs
// (docs/benchmarks.md §8.1): a count of answers rather than a time, so a loaded machine
// changes it little.
//
//   node --import tsx bench/reads-during.ts [--request psbt|body|eip712] [--engine sqlite|postgres] [--tries 8]
//
// In one process (the tests' in-process harness: the app, a scratch store), per try, the heavy
// request is sent, and while it is in flight whoami is asked again and again, one at a time.
// Printed: per try, how many whoami answers came back before the heavy request's answer, and
// the longest wait for one of them. The requests:
//   psbt  sign_transaction of a fresh PSBT whose --inputs (256) inputs all spend outputs of a
//         private key's P2WPKH address
//   body  create_user_tag whose body is --bytes (1,048,576) long: one more member, `pad`, a
//         string the schema drops (bench:worst kind 5's first shape)
//   eip712  sign_raw_payload of an EIP-712 document holding a string[] of 4,000 empty strings
//         (bench:worst kind 2's shape), by a wallet's Ethereum account
// On SQLite a request waiting for the store's one connection while a transaction holds it, or
// for a task that does not yield, counts none; one served between the heavy request's steps
// or slices counts.
import { randomBytes } from "node:crypto";
import * as btc from "@scure/btc-signer";
import { inproc } from "../test/helpers/inproc.ts";
import { ETH, newPrivateKey, newWallet } from "../test/helpers/keys-and-wallets.ts";
import { num, option } from "./options.ts";
import { FastStamper } from "./stamp.ts";

const REQUEST = option("--request", "BENCH_REQUEST") ?? "psbt";
if (REQUEST !== "psbt" && REQUEST !== "body" && REQUEST !== "eip712") throw new Error("--request is psbt, body or eip712");
const ENGINE = (option("--engine", "BENCH_ENGINE") ?? "sqlite") as "sqlite" | "postgres";
const BYTES = num("--bytes", "BENCH_BYTES", 1_048_576, 1024, 64 * 1024 * 1024);
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
  const stamper = new FastStamper(h.root.key.publicKey, h.root.key.privateKey);
  let tags = 0;
  /** create_user_tag, its body padded to BYTES with a member the schema drops. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answer's JSON, whatever it is
  const padded = (): Promise<{ status: number; json: any }> => {
    const body = {
      type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      timestampMs: String(Date.now()),
      organizationId: h.root.organizationId,
      parameters: { userTagName: `reads-${++tags}`, userIds: [] },
    };
    const head = `${JSON.stringify(body).slice(0, -1)},"pad":"`;
    const text = `${head}${"a".repeat(Math.max(0, BYTES - Buffer.byteLength(head) - 2))}"}`;
    return h.post("/public/v1/submit/create_user_tag", text, { "X-Stamp": stamper.stamp(text).stamp });
  };
  const eth = (await newWallet(h, [ETH()])).addresses[0]!;
  const typedData = (n: number) =>
    JSON.stringify({
      types: { EIP712Domain: [{ name: "name", type: "string" }], M: [{ name: "v", type: "string[]" }] },
      primaryType: "M",
      domain: { name: `reads-${++tags}` },
      message: { v: Array(n).fill("") },
    });
  const heavy = () =>
    REQUEST === "psbt"
      ? h.submit("sign_transaction", "ACTIVITY_TYPE_SIGN_TRANSACTION_V2", {
          signWith: key.privateKeyId,
          unsignedTransaction: psbt(),
          type: "TRANSACTION_TYPE_BITCOIN",
        })
      : REQUEST === "eip712"
        ? h.submit("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
            signWith: eth,
            payload: typedData(4000),
            encoding: "PAYLOAD_ENCODING_EIP712",
            hashFunction: "HASH_FUNCTION_NO_OP",
          })
        : padded();
  const counts: number[] = [];
  const waits: number[] = [];
  for (let t = 0; t < TRIES; t++) {
    let answered = false;
    const request = heavy().then((res) => ((answered = true), res));
    let reads = 0;
    let longest = 0;
    while (!answered) {
      const asked = performance.now();
      const res = await h.query("whoami", {});
      if (res.status !== 200) throw new Error(`whoami: ${res.status} ${JSON.stringify(res.json)}`);
      longest = Math.max(longest, performance.now() - asked);
      if (!answered) reads++;
    }
    const res = await request;
    if (res.status !== 200 || res.json.activity?.status !== "ACTIVITY_STATUS_COMPLETED")
      throw new Error(`${REQUEST}: ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
    counts.push(reads);
    waits.push(longest);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const what =
    REQUEST === "psbt" ? `${INPUTS}-input PSBT` : REQUEST === "eip712" ? "EIP-712 document of 4,000 empty strings" : `${BYTES}-byte body`;
  console.log(
    `${ENGINE}, ${what}: whoami answers while it ran, per try: ${counts.join(" ")} (median ${median(counts)}); longest wait for one, median of the tries: ${median(waits).toFixed(1)} ms`,
  );
} finally {
  await h.close();
}
