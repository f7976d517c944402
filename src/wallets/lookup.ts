// Finding organizations by a wallet account address (list_suborgs' WALLET_ACCOUNT_ADDRESS).
import type { SelectQueryBuilder } from "kysely";
import type { Database } from "../store/schema.ts";
import { eip55 } from "./derivation.ts";

/**
 * The spelling addresses are stored in: Ethereum in EIP-55 casing, bech32 (P2WPKH) and hex
 * public keys in lower case (their case carries no meaning), Solana (base58) as given.
 */
export function canonicalAddress(v: string): string {
  if (/^0x[0-9a-fA-F]{40}$/.test(v)) return eip55(v.slice(2));
  if (/^(bc|tb)1[0-9a-zA-Z]{6,90}$/i.test(v)) return v.toLowerCase();
  if (/^(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{66}|[0-9a-fA-F]{130})$/.test(v)) return v.toLowerCase();
  return v;
}

type OrgQuery = SelectQueryBuilder<Database, "organizations", { id: string; created_at: number }>;

/** Narrows organizations to those holding a wallet account with this address. */
export function byWalletAccountAddress(q: OrgQuery, address: string): OrgQuery {
  const a = canonicalAddress(address);
  return q.where("organizations.id", "in", (s) => s.selectFrom("wallet_accounts").select("organization_id").where("address", "=", a));
}
