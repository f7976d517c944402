// sigil service-keys list | rotate [purpose] | retire <keyId>: the lifecycle of the service's
// P-256 keys (docs/logins.md §1.1 lists the purposes). rotate makes a new
// active key (for one purpose, or all) and keeps the previous one published; retire removes a
// non-active key from /public/v1/discovery/keys (tokens it signed stop verifying).
import { openService } from "../service.ts";
import { isServiceKeyPurpose, listServiceKeys, retireServiceKey, rotateServiceKeys, SERVICE_KEY_PURPOSES } from "../auth/service-keys.ts";

export async function serviceKeys(argv: string[]): Promise<void> {
  const [action, arg] = argv;
  const service = await openService(argv.slice(1));
  try {
    const db = service.store.db;
    const given = arg && !arg.startsWith("--") ? arg : undefined;
    if (action === "rotate") {
      if (given !== undefined && !isServiceKeyPurpose(given)) throw new Error(`purpose must be one of ${SERVICE_KEY_PURPOSES.join(", ")}`);
      const rotated = await rotateServiceKeys(db, service.masterKey, given !== undefined ? [given] : SERVICE_KEY_PURPOSES);
      process.stdout.write(`${JSON.stringify({ rotated })}\n`);
    } else if (action === "retire") {
      if (!given) throw new Error("retire needs the key id: sigil service-keys retire <keyId>");
      await retireServiceKey(db, given);
      process.stdout.write(`${JSON.stringify({ retiredKeyId: given })}\n`);
    } else if (action === "list") {
      const keys = await listServiceKeys(db);
      process.stdout.write(
        `${JSON.stringify({ keys: keys.map((k) => ({ keyId: k.id, purpose: k.purpose, status: k.status, publicKey: k.public_key, createdAt: k.created_at })) })}\n`,
      );
    } else {
      throw new Error(`usage: sigil service-keys list | rotate [${SERVICE_KEY_PURPOSES.join("|")}] | retire <keyId>`);
    }
  } finally {
    await service.store.close();
  }
}
