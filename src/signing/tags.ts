// Private key tags (docs/signing.md §3): what their activities share.
import { notFound } from "../errors.ts";
import { lockingRead } from "../store/locks.ts";
import type { Executor } from "../store/schema.ts";

/**
 * Locks (shared) the private keys of the organization named by a tag change, so a key found
 * here is still there when tagged (delete_private_keys locks exclusively); 404 names the
 * first one missing.
 */
export async function lockPrivateKeys(tx: Executor, organizationId: string, ids: readonly string[], field: string): Promise<void> {
  if (ids.length === 0) return;
  const sorted = [...ids].sort();
  const q = tx
    .selectFrom("private_keys")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("id", "in", sorted)
    .orderBy("id");
  const found = new Set((await lockingRead(tx, q, "shared").execute()).map((r) => r.id));
  const missing = ids.findIndex((id) => !found.has(id));
  if (missing >= 0) throw notFound(`${field}[${missing}]: no private key ${ids[missing]} in organization ${organizationId}`);
}
