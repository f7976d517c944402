// What `bitcoin.tx.outputs[i]` says of an output script (docs/signing-policies.md §1.4): its
// address type and, for the types with one, its address. The standard templates are matched
// byte for byte, and the public keys P2TR, P2PK and bare multisig carry are checked with
// libsecp256k1 (tiny-secp256k1): @scure/btc-signer's script decoder checks them with a square
// root in JavaScript each, and a PSBT of key-laden outputs made that seconds of one request
// (docs/signing.md §6). The results are the decoder's for these templates.
import { Address, type NETWORK } from "@scure/btc-signer";
import { isPoint, isXOnlyPoint } from "tiny-secp256k1";
import { toHex } from "./errors.ts";

export type BitcoinTxOutputFacts = { value: bigint; script_pubkey: string; address: string; address_type: string };

const OP_0 = 0x00;
const OP_1 = 0x51;
const OP_16 = 0x60;
const OP_RETURN = 0x6a;
const OP_DUP = 0x76;
const OP_EQUAL = 0x87;
const OP_EQUALVERIFY = 0x88;
const OP_HASH160 = 0xa9;
const OP_CHECKSIG = 0xac;
const OP_CHECKMULTISIG = 0xae;

type Classified =
  | { type: "pkh" | "sh" | "wpkh" | "wsh"; hash: Uint8Array }
  | { type: "tr"; pubkey: Uint8Array }
  | { type: "pk" | "ms" | "p2a" }
  | undefined;

/** A push of a public key (33 or 65 bytes) at `at` that is a point: its end, else -1. */
function pubkeyPush(s: Uint8Array, at: number): number {
  const len = s[at];
  if (len !== 33 && len !== 65) return -1;
  const end = at + 1 + len;
  return end <= s.length && isPoint(s.subarray(at + 1, end)) ? end : -1;
}

/** OP_m <key>… OP_n OP_CHECKMULTISIG, 1 ≤ m ≤ n, every key a point. */
function isBareMultisig(s: Uint8Array): boolean {
  const m = s[0]! - OP_1 + 1;
  if (s.length < 3 || m < 1 || m > 16 || s.at(-1) !== OP_CHECKMULTISIG) return false;
  let at = 1;
  let n = 0;
  while (at < s.length - 2) {
    at = pubkeyPush(s, at);
    if (at < 0) return false;
    n++;
  }
  return at === s.length - 2 && s[at] === OP_1 + n - 1 && n >= m;
}

function classify(s: Uint8Array): Classified {
  const n = s.length;
  if (n === 25 && s[0] === OP_DUP && s[1] === OP_HASH160 && s[2] === 20 && s[23] === OP_EQUALVERIFY && s[24] === OP_CHECKSIG)
    return { type: "pkh", hash: s.subarray(3, 23) };
  if (n === 23 && s[0] === OP_HASH160 && s[1] === 20 && s[22] === OP_EQUAL) return { type: "sh", hash: s.subarray(2, 22) };
  if (n === 22 && s[0] === OP_0 && s[1] === 20) return { type: "wpkh", hash: s.subarray(2) };
  if (n === 34 && s[0] === OP_0 && s[1] === 32) return { type: "wsh", hash: s.subarray(2) };
  if (n === 34 && s[0] === OP_1 && s[1] === 32) return isXOnlyPoint(s.subarray(2)) ? { type: "tr", pubkey: s.subarray(2) } : undefined;
  if (n === 4 && s[0] === OP_1 && s[1] === 2 && s[2] === 0x4e && s[3] === 0x73) return { type: "p2a" };
  if ((n === 35 || n === 67) && s[n - 1] === OP_CHECKSIG && pubkeyPush(s, 0) === n - 1) return { type: "pk" };
  if (s[0]! >= OP_1 && s[0]! <= OP_16 && isBareMultisig(s)) return { type: "ms" };
  return undefined;
}

// The address type names of `address_type` [our choice: upstream names the field, not its values].
const ADDRESS_TYPES: Readonly<Record<NonNullable<Classified>["type"], string>> = {
  pkh: "P2PKH",
  sh: "P2SH",
  wpkh: "P2WPKH",
  wsh: "P2WSH",
  tr: "P2TR",
  pk: "P2PK",
  ms: "P2MS",
  p2a: "P2A",
};

export function outputFacts(script: Uint8Array, value: bigint, network: typeof NETWORK): BitcoinTxOutputFacts {
  const c = classify(script);
  let address = "";
  let type = c ? ADDRESS_TYPES[c.type] : script[0] === OP_RETURN ? "OP_RETURN" : "UNKNOWN";
  if (c && (c.type === "pkh" || c.type === "sh" || c.type === "wpkh" || c.type === "wsh" || c.type === "tr")) {
    address = Address(network).encode(c as Parameters<ReturnType<typeof Address>["encode"]>[0]);
  } else if (
    type === "UNKNOWN" &&
    script.length >= 4 &&
    script.length <= 42 &&
    script[0]! >= OP_1 &&
    script[0]! <= OP_16 &&
    script[1] === script.length - 2
  ) {
    // A witness program of a version with no named type: still an address (BIP-350).
    type = "WITNESS_UNKNOWN";
  }
  return { value, script_pubkey: toHex(script), address, address_type: type };
}
