// What the largest legal EIP-712 documents cost the event loop (docs/signing.md §2.4), in this
// process: for documents of 4,093 zeros, empty structs, empty strings and empty lists (4,096
// elements, the bound), the wall time of the check (planTypedData), the policy facts
// (parseEip712), the digest at once and in slices, and the longest slice in CPU time (a
// setImmediate ticker reading process.cpuUsage, so the machine's other load does not count);
// then the check of the largest sign_raw_payloads and the refusal of a 64 KiB document.
// Nine rounds: min, median, max.
//
//   node --import tsx bench/eip712-hashing.ts
import { planTypedData, hashPlan, hashPlanSliced, MAX_EIP712_ELEMENTS } from "../src/signing/eip712.ts";
import { parseEip712 } from "../src/signing/parsers/eip712.ts";
import { checkPayloads } from "../src/signing/payload.ts";
function typedData(fieldType: string, extraTypes: Record<string, unknown[]>, item: string, n: number): string {
  const doc = {
    types: { EIP712Domain: [{ name: "name", type: "string" }], ...extraTypes, M: [{ name: "v", type: fieldType }] },
    primaryType: "M",
    domain: { name: "worst" },
    message: { v: "@" },
  };
  const [before, after] = JSON.stringify(doc).split('"@"') as [string, string];
  return before + "[" + Array(n).fill(item).join(",") + "]" + after;
}
const n = MAX_EIP712_ELEMENTS - 3;
const docs: [string, string][] = [
  ["zeros", typedData("uint256[]", {}, "0", n)],
  ["structs", typedData("E[]", { E: [] }, "{}", n)],
  ["strings", typedData("string[]", {}, '""', n)],
  ["lists", typedData("uint8[][]", {}, "[]", n)],
];
const big = typedData("string[]", {}, '""', 21_790);
const all: Record<string, number[]> = {};
const rec = (k: string, v: number) => (all[k] ??= []).push(v);
for (let r = 0; r < 9; r++) {
  for (const [name, d] of docs) {
    let t = performance.now();
    const plan = planTypedData(d);
    rec(`plan ${name}`, performance.now() - t);
    if (plan.elements !== MAX_EIP712_ELEMENTS) throw new Error(`${plan.elements}`);
    t = performance.now();
    parseEip712(d);
    rec(`facts ${name}`, performance.now() - t);
    t = performance.now();
    hashPlan(plan);
    rec(`hash at once ${name}`, performance.now() - t);
    // Longest synchronous stretch while hashing in slices: timed from each setImmediate turn.
    const cpu = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    let last = cpu(),
      gap = 0,
      done = false;
    const tick = () => {
      const now = cpu();
      gap = Math.max(gap, now - last);
      last = now;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    t = performance.now();
    await hashPlanSliced(plan);
    done = true;
    rec(`sliced total ${name}`, performance.now() - t);
    rec(`sliced longest stretch, CPU ms ${name}`, gap);
  }
  let t = performance.now();
  checkPayloads([docs[2]![1], docs[2]![1]], "PAYLOAD_ENCODING_EIP712", "HASH_FUNCTION_NO_OP", (i) => `p[${i}]`, {}, "p");
  rec("check of the largest request (2 × strings)", performance.now() - t);
  t = performance.now();
  try {
    checkPayloads([big], "PAYLOAD_ENCODING_EIP712", "HASH_FUNCTION_NO_OP", (i) => `p[${i}]`, {}, "p");
  } catch {
    // the refusal is what is timed
  }
  rec("refusal of a 64 KiB document", performance.now() - t);
}
for (const [k, v] of Object.entries(all)) {
  v.sort((a, b) => a - b);
  console.log(k.padEnd(44), "min", v[0]!.toFixed(1), "median", v[4]!.toFixed(1), "max", v[8]!.toFixed(1), "ms");
}
