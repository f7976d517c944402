// What the condition keywords `private_key`, `wallet_account` and `wallet` read for an
// activity that signs (docs/signing.md §4): the key its signWith names in the target
// organization, as it stands when the activity is evaluated.
import type { PrivateKeyFacts, SignerFacts } from "../policy/facts.ts";
import type { Executor } from "../store/schema.ts";
import { findSigner, type Signer } from "./resolve.ts";

/** Ethereum addresses in facts are lower-case 0x hex, whatever casing the request used. */
export function factAddress(address: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(address) ? address.toLowerCase() : address;
}

/**
 * A wallet account binds `wallet_account` (its address) and `wallet` (the wallet holding it);
 * a private key binds `private_key` only. An unknown signWith binds nothing: the keywords are absent (an evaluation
 * error, never an allow) and the activity itself fails with 404. `known` is the signer the
 * submission already resolved from the same signWith (docs/signing.md §5): not read again.
 */
export async function signerFacts(db: Executor, organizationId: string, signWith: string, known?: Signer): Promise<SignerFacts> {
  const s = known ?? (await findSigner(db, organizationId, signWith));
  if (!s) return {};
  if (s.kind === "wallet_account") {
    const w = s.wallet;
    return {
      walletAccount: { address: factAddress(s.account.address) },
      wallets: [{ id: w.id, imported: w.imported === 1, exported: w.exported === 1, label: w.name }],
    };
  }
  const tags = await db
    .selectFrom("private_key_tag_members")
    .select("tag_id")
    .where("private_key_id", "=", s.key.id)
    .orderBy("tag_id")
    .execute();
  const privateKey: PrivateKeyFacts = {
    id: s.key.id,
    tags: tags.map((t) => t.tag_id),
    imported: s.key.imported === 1,
    exported: s.key.exported === 1,
    label: s.key.name,
  };
  return { privateKey };
}
