// The `eth` / `solana` / `bitcoin` condition keywords of a signing request, built from its parsed
// payload (docs/signing-policies.md §1). Pure, so approvals re-derive the same facts from
// the stored intent.
import type { SigningFacts } from "../policy/facts.ts";
import type { EthTxFacts } from "./parsers/ethereum.ts";
import type { Eip712Facts } from "./parsers/eip712.ts";
import type { SolanaTxFacts } from "./parsers/solana.ts";
import type { BitcoinTxFacts } from "./parsers/bitcoin.ts";

export const ethTxFacts = (tx: EthTxFacts): SigningFacts => ({ eth: { tx: tx } });
export const eip712Facts = (data: Eip712Facts): SigningFacts => ({ eth: { eip_712: data } });
export const solanaTxFacts = (tx: SolanaTxFacts): SigningFacts => ({ solana: { tx: tx } });
export const bitcoinTxFacts = (tx: BitcoinTxFacts): SigningFacts => ({ bitcoin: { tx: tx } });
