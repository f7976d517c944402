// The wallets an activity names, as the policy keywords `wallet` and `wallets` see them:
// read when the activity is evaluated, from the target organization.
import type { WalletFacts } from "../policy/facts.ts";
import type { Executor } from "../store/schema.ts";
import { findWallets } from "../store/wallets.ts";
import { canonicalAddress } from "./lookup.ts";

/**
 * What `policyWallets` names: wallets of the organization by id, the one being created (by
 * name), or the wallet holding an account (by address).
 */
export type PolicyWallets = { existing: readonly string[] } | { creating: string } | { accountAddress: string };

export async function walletFacts(db: Executor, organizationId: string, named: PolicyWallets): Promise<WalletFacts[]> {
  // The wallet being created has no id yet: its label is the name it will carry.
  if ("creating" in named) return [{ id: "", imported: false, exported: false, label: named.creating }];
  if ("accountAddress" in named) {
    const account = await db
      .selectFrom("wallet_accounts")
      .select("wallet_id")
      .where("organization_id", "=", organizationId)
      .where("address", "=", canonicalAddress(named.accountAddress))
      .orderBy("created_at")
      .executeTakeFirst();
    named = { existing: account ? [account.wallet_id] : [] };
  }
  // Unknown ids (the activity then fails with 404) are left out; a `wallet` reference with
  // none left is absent, an evaluation error.
  const rows = await findWallets(db, organizationId, [...new Set(named.existing)]);
  return rows.map((w) => ({ id: w.id, imported: w.imported === 1, exported: w.exported === 1, label: w.name }));
}
