// Conditions over the signing keywords (docs/signing-policies.md §1, docs/policy-language.md
// §4.3): `eth.tx`, `eth.eip_712` and `solana.tx` read the parsed request; a field the request
// does not have, or a value of the wrong type, is an evaluation error, never an allow.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  activityKind,
  compileExpression,
  PolicyRuntimeError,
  type ActivityFacts,
  type PolicyRuntimeErrorKind,
} from "../../src/policy/index.ts";
import type { SigningFacts } from "../../src/policy/facts.ts";
import { parseEthereumTransaction } from "../../src/signing/parsers/ethereum.ts";
import { parseSolanaTransaction } from "../../src/signing/parsers/solana.ts";
import { parseEip712 } from "../../src/signing/parsers/eip712.ts";
import { eip712Facts, ethTxFacts, solanaTxFacts } from "../../src/signing/facts.ts";
import { VECTOR_FILE, type signingVectors } from "../../scripts/signing-vectors.ts";

const vectors = JSON.parse(readFileSync(VECTOR_FILE, "utf8")) as ReturnType<typeof signingVectors>;
const vector = (chain: "ethereum" | "solana", prefix: string) => vectors[chain].find((v) => v.name.startsWith(prefix))!.unsigned;

const SIGN_TX = "ACTIVITY_TYPE_SIGN_TRANSACTION_V2";
const activity = (signing: SigningFacts): ActivityFacts => ({
  type: SIGN_TX,
  kind: activityKind(SIGN_TX),
  resource: "PRIVATE_KEY",
  action: "SIGN",
  params: {},
  signing,
});

const eip1559 = activity(
  ethTxFacts(parseEthereumTransaction(vector("ethereum", "EIP-1559 ERC-20"), "0x00000000000000000000000000000000000000aa").facts),
);
const legacy = activity(ethTxFacts(parseEthereumTransaction(vector("ethereum", "legacy without")).facts));
const creation = activity(ethTxFacts(parseEthereumTransaction(vector("ethereum", "EIP-1559 contract creation")).facts));
const solTransfer = activity(solanaTxFacts(parseSolanaTransaction(vector("solana", "legacy")).facts));
const solSpl = activity(solanaTxFacts(parseSolanaTransaction(vector("solana", "v0: SPL")).facts));
const permit = activity(
  eip712Facts(
    parseEip712(
      JSON.stringify({
        types: {
          EIP712Domain: [
            { name: "name", type: "string" },
            { name: "chainId", type: "uint256" },
          ],
          Item: [
            { name: "token", type: "address" },
            { name: "amount", type: "uint256" },
          ],
          Batch: [
            { name: "permitted", type: "Item[]" },
            { name: "note", type: "string" },
          ],
        },
        primaryType: "Batch",
        domain: { name: "Permit2", chainId: 1 },
        message: {
          permitted: [
            { token: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", amount: "99" },
            { token: "0x00000000000000000000000000000000000000bb", amount: 7 },
          ],
          note: "x",
        },
      }),
    ),
  ),
);

function holds(source: string, a: ActivityFacts): boolean {
  return compileExpression("condition", source)!.evaluate({ activity: a });
}
function fails(source: string, a: ActivityFacts, kind: PolicyRuntimeErrorKind, text?: string): void {
  assert.throws(
    () => holds(source, a),
    (err: unknown) => {
      assert.ok(err instanceof PolicyRuntimeError, String(err));
      assert.equal(err.kind, kind, err.message);
      if (text) assert.ok(err.message.includes(text), err.message);
      return true;
    },
    source,
  );
}

describe("conditions over the signing keywords", () => {
  it("eth.tx: addresses, ints (beyond 64 bits), data slices and the selector", () => {
    assert.equal(holds("eth.tx.to == '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'", eip1559), true);
    assert.equal(holds("eth.tx.to == '0x70997970c51812dc3a010c7d01b50e0d17dc79c8'", eip1559), false);
    assert.equal(holds("eth.tx.from == '0x00000000000000000000000000000000000000aa' && eth.tx.type == 'TYPE_2'", eip1559), true);
    assert.equal(holds("eth.tx.chain_id == 8453 && eth.tx.nonce <= 42 && eth.tx.value == 0 && eth.tx.gas == 65000", eip1559), true);
    assert.equal(holds("eth.tx.gas_price == eth.tx.max_fee_per_gas && eth.tx.max_priority_fee_per_gas < 1000001", eip1559), true);
    assert.equal(holds("eth.tx.data[0..10] == '0xa9059cbb' && eth.tx.function_signature == '0xa9059cbb'", eip1559), true);
    assert.equal(holds("eth.tx.value < 1000000000000000000000", creation), false); // 2^200 wei
    assert.equal(holds("eth.tx.value > 170141183460469231731687303715884105728 && eth.tx.to == ''", creation), true);
    assert.equal(holds("eth.tx.gas_price == 20000000000 && eth.tx.type == 'LEGACY'", legacy), true);
  });

  it("eth.tx: a field the transaction type lacks, or a quoted number, is OUTCOME_ERROR material (never false, never true)", () => {
    fails("eth.tx.max_fee_per_gas < 100", legacy, "MissingField", "max_fee_per_gas");
    fails("eth.tx.chain_id == 1", legacy, "MissingField", "chain_id"); // no EIP-155 chain id
    fails("eth.tx.chain_id == '8453'", eip1559, "TypeMismatch");
    fails("eth.tx.contract_call_args['wad'] > 1", eip1559, "MissingField"); // no ABI support
    fails("eth.tx.constructor == 'x'", eip1559, "MissingField");
    fails("eth.tx == 'x'", eip1559, "TypeMismatch");
    fails("eth.eip_712.primary_type == 'x'", eip1559, "MissingField", "eip_712");
    fails("solana.tx.transfers.count() == 0", eip1559, "AbsentKeyword", "'solana'");
    fails("true || eth.tx.nope == 1", eip1559, "MissingField");
  });

  it("eth.eip_712: domain, primary type, nested message maps and lists", () => {
    assert.equal(
      holds("eth.eip_712.domain.name == 'Permit2' && eth.eip_712.domain.chain_id == 1 && eth.eip_712.primary_type == 'Batch'", permit),
      true,
    );
    assert.equal(holds("eth.eip_712.message['permitted'][0]['token'] == '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48'", permit), true);
    assert.equal(holds("eth.eip_712.message['permitted'].all(p, p['amount'] < 100)", permit), true);
    assert.equal(holds("eth.eip_712.message['permitted'].any(p, p.amount > 50)", permit), true);
    assert.equal(holds("eth.eip_712.message['permitted'].count() == 2 && eth.eip_712.message.note == 'x'", permit), true);
    fails("eth.eip_712.domain.verifying_contract == '0x'", permit, "MissingField");
    fails("eth.eip_712.message['toString'] == 'x'", permit, "MissingField");
    fails("eth.eip_712.message['permitted'] == 'x'", permit, "TypeMismatch");
  });

  it("solana.tx: transfers, SPL transfers, instructions and accounts", () => {
    const facts = parseSolanaTransaction(vector("solana", "legacy")).facts;
    const t = facts.transfers[0]!;
    assert.equal(
      holds(
        `solana.tx.transfers.count == 1 && solana.tx.transfers.all(t, t.to == '${t.to}' && t.amount <= 1500000 && t.from == '${t.from}')`,
        solTransfer,
      ),
      true,
    );
    assert.equal(holds(`solana.tx.transfers.any(t, t.to == '${t.from}')`, solTransfer), false);
    assert.equal(holds("solana.tx.address_table_lookups.count == 0 && solana.tx.spl_transfers.count() == 0", solTransfer), true);
    assert.equal(
      holds(`solana.tx.recent_blockhash == '${facts.recent_blockhash}' && solana.tx.account_keys[0] == '${t.from}'`, solTransfer),
      true,
    );
    assert.equal(
      holds(
        "solana.tx.instructions.all(i, i.program_key in solana.tx.program_keys) && solana.tx.instructions[0].accounts[0].signer",
        solTransfer,
      ),
      true,
    );
    // No transfers at all: `all` over the empty list is true (docs/policy-language.md §3.5).
    assert.equal(holds("solana.tx.transfers.all(t, t.to == 'nobody')", solSpl), true);
    assert.equal(
      holds("solana.tx.spl_transfers.count() == 2 && solana.tx.spl_transfers.all(s, s.amount <= 250000 && s.signers.count() == 0)", solSpl),
      true,
    );
    const mint = parseSolanaTransaction(vector("solana", "v0: SPL")).facts.spl_transfers[0]!.token_mint!;
    assert.equal(holds(`solana.tx.spl_transfers[0].token_mint == '${mint}'`, solSpl), true);
    // A plain Transfer names no mint: a policy pinning the mint cannot be satisfied by one.
    fails(`solana.tx.spl_transfers.all(s, s.token_mint == '${mint}')`, solSpl, "MissingField", "token_mint");
    fails("eth.tx.to == 'x'", solSpl, "AbsentKeyword", "'eth'");
  });
});
