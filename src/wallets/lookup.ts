// Finding organizations by a wallet account address (list_suborgs' WALLET_ACCOUNT_ADDRESS).
import type { SelectQueryBuilder } from "kysely";
import type { Database } from "../store/schema.ts";
import { eip55 } from "./derivation.ts";
import { Lru } from "../cache/lru.ts";

/**
 * The spelling addresses are stored in: Ethereum in EIP-55 casing, bech32 (P2WPKH) and hex
 * public keys in lower case (their case carries no meaning), Solana (base58) as given.
 */
export function canonicalAddress(v: string): string {
  if (/^0x[0-9a-fA-F]{40}$/.test(v)) return checksummed(v.slice(2).toLowerCase());
  if (/^(bc|tb)1[0-9a-zA-Z]{6,90}$/i.test(v)) return v.toLowerCase();
  if (/^(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{66}|[0-9a-fA-F]{130})$/.test(v)) return v.toLowerCase();
  return v;
}

// The EIP-55 casing costs a keccak-256 in JavaScript, and a signature resolves its signWith
// twice (docs/signing.md §5): the last few thousand addresses are remembered, bounded.
const CHECKSUMMED_MAX = 4_096;
const checksummedCache = new Lru<string>(CHECKSUMMED_MAX);
function checksummed(lower40: string): string {
  let out = checksummedCache.get(lower40);
  if (out === undefined) checksummedCache.set(lower40, (out = eip55(lower40)));
  return out;
}

type OrgQuery = SelectQueryBuilder<Database, "organizations", { id: string; created_at: number }>;

/** Narrows organizations to those holding a wallet account with this address. */
export function byWalletAccountAddress(q: OrgQuery, address: string): OrgQuery {
  const a = canonicalAddress(address);
  return q.where("organizations.id", "in", (s) => s.selectFrom("wallet_accounts").select("organization_id").where("address", "=", a));
}
