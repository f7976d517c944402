// sigil webhook-keys list | rotate | retire <kid>: the webhook signing key lifecycle.
// rotate makes a new active key and keeps the previous one published (receivers can still
// verify what it signed); retire removes a non-active key from the published key set.
import { openService } from "../service.ts";
import { listSigningKeys, retireSigningKey, rotateSigningKey } from "../webhooks/signing-keys.ts";

export async function webhookKeys(argv: string[]): Promise<void> {
  const [action, kid] = argv;
  const service = await openService(argv.slice(1));
  try {
    const db = service.store.db;
    if (action === "rotate") {
      process.stdout.write(`${JSON.stringify({ activeKeyId: await rotateSigningKey(db, service.masterKey) })}\n`);
    } else if (action === "retire") {
      if (!kid || kid.startsWith("--")) throw new Error("retire needs the key id: sigil webhook-keys retire <kid>");
      await retireSigningKey(db, kid);
      process.stdout.write(`${JSON.stringify({ retiredKeyId: kid })}\n`);
    } else if (action === "list") {
      const keys = await listSigningKeys(db);
      process.stdout.write(`${JSON.stringify({ keys: keys.map((k) => ({ keyId: k.id, status: k.status, createdAt: k.created_at })) })}\n`);
    } else {
      throw new Error("usage: sigil webhook-keys list | rotate | retire <kid>");
    }
  } finally {
    await service.store.close();
  }
}
