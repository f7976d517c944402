// sigil init: bootstrap a root organization directly in the store (no server needed; works
// while one runs). Contract relied on by tooling:
//   sigil init --name "<org>" --json  →  {"organizationId","userId","apiKeyId","apiPublicKey","apiPrivateKey"}
//   with --api-public-key <hex> the key is registered and no private key is printed.
import { openService } from "../service.ts";
import { generateP256KeyPair } from "../crypto/keygen.ts";
import { publicKeyProblem } from "../crypto/public-keys.ts";
import { insertOrganization, setRootQuorum } from "../store/organizations.ts";
import { newId } from "../store/util.ts";
import { addUsers } from "../activities/users/new-users.ts";
import { flag } from "./args.ts";

export async function init(argv: string[]): Promise<void> {
  const name = flag(argv, "--name");
  if (!name || !name.trim()) throw new Error('--name "<organization name>" is required');
  if (name.length > 256) throw new Error("--name must be at most 256 characters");
  const json = argv.includes("--json");
  const givenKey = flag(argv, "--api-public-key");
  if (givenKey) {
    const problem = publicKeyProblem("API_KEY_CURVE_P256", givenKey);
    if (problem) throw new Error(`--api-public-key: ${problem}`);
  }
  const userName = flag(argv, "--user-name") ?? "root";
  const userEmail = flag(argv, "--user-email");
  const pair = givenKey ? undefined : generateP256KeyPair();
  const apiPublicKey = givenKey ?? pair!.publicKey;

  const service = await openService(argv);
  try {
    if (!json) for (const w of service.warnings) process.stderr.write(`warning: ${w}\n`);
    const now = Date.now();
    const organizationId = newId();
    const { userId, apiKeyId } = await service.store.db.transaction().execute(async (tx) => {
      await insertOrganization(tx, {
        id: organizationId,
        name,
        parent_id: null,
        root_quorum_threshold: 1,
        policy_version: 0,
        settings: "{}",
        created_at: now,
        updated_at: now,
      });
      const [uid] = await addUsers(
        tx,
        organizationId,
        [
          {
            userName,
            userEmail,
            apiKeys: [{ apiKeyName: "root", publicKey: apiPublicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        now,
        "root user",
      );
      await setRootQuorum(tx, organizationId, [uid!]);
      const key = await tx.selectFrom("api_keys").select("id").where("user_id", "=", uid!).executeTakeFirstOrThrow();
      return { userId: uid!, apiKeyId: key.id };
    });
    const out = {
      organizationId,
      userId,
      apiKeyId,
      apiPublicKey,
      ...(pair ? { apiPrivateKey: pair.privateKey } : {}),
    };
    if (json) {
      process.stdout.write(JSON.stringify(out) + "\n");
    } else {
      process.stdout.write(
        [
          `Created organization "${name}"`,
          `  organizationId  ${organizationId}`,
          `  root userId     ${userId} (${userName}), root quorum 1/1`,
          `  apiKeyId        ${apiKeyId}`,
          `  apiPublicKey    ${apiPublicKey}`,
          ...(pair ? [`  apiPrivateKey   ${pair.privateKey}   <- shown once; keep it secret`] : []),
          "",
        ].join("\n"),
      );
    }
  } finally {
    await service.store.close();
    await service.masterKey.close();
  }
}
