// Unsigned Ethereum transactions: legacy (with or without an EIP-155 chain id) and the typed
// envelopes 1 (EIP-2930), 2 (EIP-1559), 3 (EIP-4844) and 4 (EIP-7702). Pure: bytes in, the
// `eth.tx` facts and what signing needs out (docs/signing-policies.md §1.1, §2.1).
import { ParseError, hexBytes, toHex } from "./errors.ts";
import { intBytes, rlpDecode, rlpEncode, rlpInt, type RlpItem } from "./rlp.ts";

export type EthTxType = "LEGACY" | "TYPE_1" | "TYPE_2" | "TYPE_3" | "TYPE_4";

/** One EIP-7702 authorization as `eth.tx.authorization_list` shows it. */
export type EthAuthorizationFacts = {
  address: string;
  chain_id: bigint;
  nonce: bigint;
};

/**
 * `eth.tx`. Fields a transaction type does not carry are left out (reading one is a
 * MissingField error, OUTCOME_ERROR), never filled with a zero that could satisfy `<`.
 */
export type EthTxFacts = {
  type: EthTxType;
  /** The signer's address when the request names it by address; '' otherwise. */
  from: string;
  /** Lower-case 0x address; '' for a contract creation. */
  to: string;
  value: bigint;
  /** Lower-case 0x hex ('0x' when empty). */
  data: string;
  /** The first four bytes of `data` as 0x hex; '' when data is shorter. */
  function_signature: string;
  nonce: bigint;
  gas: bigint;
  /** Legacy and type 1: the gas price; types 2–4: the same value as max_fee_per_gas. */
  gas_price: bigint;
  /** Absent on a legacy transaction without an EIP-155 chain id. */
  chain_id?: bigint;
  max_fee_per_gas?: bigint;
  max_priority_fee_per_gas?: bigint;
  max_fee_per_blob_gas?: bigint;
  authorization_list?: EthAuthorizationFacts[];
};

export interface ParsedEthereumTx {
  /** 0 for legacy, else the envelope's type byte. */
  typeByte: number;
  /** The RLP list of the unsigned transaction (legacy EIP-155: without the trailing chain id, 0, 0). */
  fields: RlpItem[];
  /** The bytes whose keccak-256 is signed: the input itself. */
  payload: Uint8Array;
  facts: EthTxFacts;
}

const TYPE_NAMES: Readonly<Record<number, EthTxType>> = { 1: "TYPE_1", 2: "TYPE_2", 3: "TYPE_3", 4: "TYPE_4" };
/** Field count of each unsigned typed envelope. */
const TYPED_LENGTHS: Readonly<Record<number, number>> = { 1: 8, 2: 9, 3: 11, 4: 10 };

const MAX_TX_BYTES = 128 * 1024;

function bytesOf(item: RlpItem | undefined, what: string): Uint8Array {
  if (!(item instanceof Uint8Array)) throw new ParseError(`${what}: expected bytes, found a list`);
  return item;
}

function listOf(item: RlpItem | undefined, what: string): RlpItem[] {
  if (!Array.isArray(item)) throw new ParseError(`${what}: expected a list`);
  return item;
}

function address(item: RlpItem | undefined, what: string, allowEmpty: boolean): string {
  const b = bytesOf(item, what);
  if (b.length === 0 && allowEmpty) return "";
  if (b.length !== 20) throw new ParseError(`${what}: expected a 20-byte address, found ${b.length} bytes`);
  return `0x${toHex(b)}`;
}

function checkAccessList(item: RlpItem | undefined): void {
  for (const [i, entry] of listOf(item, "access_list").entries()) {
    const e = listOf(entry, `access_list[${i}]`);
    if (e.length !== 2) throw new ParseError(`access_list[${i}]: expected [address, storage keys]`);
    address(e[0], `access_list[${i}].address`, false);
    for (const [j, key] of listOf(e[1], `access_list[${i}].storage_keys`).entries()) {
      if (bytesOf(key, `access_list[${i}].storage_keys[${j}]`).length !== 32)
        throw new ParseError(`access_list[${i}].storage_keys[${j}]: expected 32 bytes`);
    }
  }
}

function authorizations(item: RlpItem | undefined): EthAuthorizationFacts[] {
  return listOf(item, "authorization_list").map((entry, i) => {
    const a = listOf(entry, `authorization_list[${i}]`);
    if (a.length !== 6) throw new ParseError(`authorization_list[${i}]: expected [chain_id, address, nonce, y_parity, r, s]`);
    for (const [k, name] of [
      [3, "y_parity"],
      [4, "r"],
      [5, "s"],
    ] as const)
      rlpInt(a[k]!, `authorization_list[${i}].${name}`);
    return {
      chain_id: rlpInt(a[0]!, `authorization_list[${i}].chain_id`),
      address: address(a[1], `authorization_list[${i}].address`, false),
      nonce: rlpInt(a[2]!, `authorization_list[${i}].nonce`),
    };
  });
}

function callFacts(to: string, value: bigint, data: Uint8Array): Pick<EthTxFacts, "to" | "value" | "data" | "function_signature"> {
  return { to, value, data: `0x${toHex(data)}`, function_signature: data.length >= 4 ? `0x${toHex(data.subarray(0, 4))}` : "" };
}

/**
 * Parses an unsigned transaction given as hex. `from` is what `eth.tx.from` reads (the
 * caller knows the signer; the unsigned bytes do not).
 */
export function parseEthereumTransaction(hex: string, from = ""): ParsedEthereumTx {
  const payload = hexBytes(hex, "unsignedTransaction");
  if (payload.length === 0) throw new ParseError("unsignedTransaction is empty");
  if (payload.length > MAX_TX_BYTES) throw new ParseError(`unsignedTransaction is longer than ${MAX_TX_BYTES} bytes`);
  const first = payload[0]!;
  if (first >= 0xc0) return parseLegacy(payload, from);
  const typeName = TYPE_NAMES[first];
  if (!typeName) throw new ParseError(`unsupported Ethereum transaction type 0x${first.toString(16).padStart(2, "0")}`);
  const fields = listOf(rlpDecode(payload.subarray(1)), "transaction");
  const expected = TYPED_LENGTHS[first]!;
  if (fields.length === expected + 3) throw new ParseError("unsignedTransaction already carries a signature");
  if (fields.length !== expected) throw new ParseError(`a ${typeName} transaction has ${expected} fields, found ${fields.length}`);
  const int = (i: number, what: string) => rlpInt(fields[i]!, what);
  const chain_id = int(0, "chain_id");
  const nonce = int(1, "nonce");
  let facts: EthTxFacts;
  if (first === 1) {
    const gas_price = int(2, "gas_price");
    facts = {
      type: typeName,
      from,
      chain_id,
      nonce,
      gas_price,
      gas: int(3, "gas"),
      ...callFacts(address(fields[4], "to", true), int(5, "value"), bytesOf(fields[6], "data")),
    };
    checkAccessList(fields[7]);
  } else {
    const max_priority_fee_per_gas = int(2, "max_priority_fee_per_gas");
    const max_fee_per_gas = int(3, "max_fee_per_gas");
    // Blob (3) and set-code (4) transactions cannot create contracts: `to` is required.
    const to = address(fields[5], "to", first === 2);
    facts = {
      type: typeName,
      from,
      chain_id,
      nonce,
      max_priority_fee_per_gas,
      max_fee_per_gas,
      gas_price: max_fee_per_gas,
      gas: int(4, "gas"),
      ...callFacts(to, int(6, "value"), bytesOf(fields[7], "data")),
    };
    checkAccessList(fields[8]);
    if (first === 3) {
      facts.max_fee_per_blob_gas = int(9, "max_fee_per_blob_gas");
      for (const [i, h] of listOf(fields[10], "blob_versioned_hashes").entries()) {
        if (bytesOf(h, `blob_versioned_hashes[${i}]`).length !== 32) throw new ParseError(`blob_versioned_hashes[${i}]: expected 32 bytes`);
      }
    }
    if (first === 4) {
      facts.authorization_list = authorizations(fields[9]);
      if (facts.authorization_list.length === 0) throw new ParseError("a TYPE_4 transaction needs at least one authorization");
    }
  }
  return { typeByte: first, fields, payload, facts };
}

function parseLegacy(payload: Uint8Array, from: string): ParsedEthereumTx {
  const fields = listOf(rlpDecode(payload), "transaction");
  if (fields.length !== 6 && fields.length !== 9)
    throw new ParseError(`a legacy transaction has 6 fields (9 with an EIP-155 chain id), found ${fields.length}`);
  const int = (i: number, what: string) => rlpInt(fields[i]!, what);
  const facts: EthTxFacts = {
    type: "LEGACY",
    from,
    nonce: int(0, "nonce"),
    gas_price: int(1, "gas_price"),
    gas: int(2, "gas"),
    ...callFacts(address(fields[3], "to", true), int(4, "value"), bytesOf(fields[5], "data")),
  };
  if (fields.length === 9) {
    // EIP-155: the unsigned form ends with chain id, 0, 0; anything else there is a signature.
    const chainId = int(6, "chain_id");
    if (chainId === 0n || int(7, "r") !== 0n || int(8, "s") !== 0n) throw new ParseError("unsignedTransaction already carries a signature");
    facts.chain_id = chainId;
  }
  return { typeByte: 0, fields: fields.slice(0, 6), payload, facts };
}

/** A recoverable secp256k1 signature over keccak-256(payload). */
export interface RecoverableSignature {
  r: bigint;
  s: bigint;
  /** 0 or 1. */
  recovery: number;
}

/** The signed transaction, serialized as the network takes it (0x hex). */
export function serializeSignedEthereum(tx: ParsedEthereumTx, sig: RecoverableSignature): string {
  const rs = [intBytes(sig.r), intBytes(sig.s)];
  if (tx.typeByte === 0) {
    const chainId = tx.facts.chain_id;
    const v = chainId === undefined ? 27n + BigInt(sig.recovery) : chainId * 2n + 35n + BigInt(sig.recovery);
    return `0x${toHex(rlpEncode([...tx.fields, intBytes(v), ...rs]))}`;
  }
  const body = rlpEncode([...tx.fields, intBytes(BigInt(sig.recovery)), ...rs]);
  return `0x${toHex(Uint8Array.from([tx.typeByte, ...body]))}`;
}
