// App proofs (docs/activities.md §6): a signed statement of how an activity was decided, in
// the shape the SDK's `verifyAppProofSignature` (@turnkey/crypto) reads. These are signatures
// by this service's own P-256 key — NOT hardware enclave attestations: there is no boot proof,
// and the full upstream `verify(appProof, bootProof)` cannot pass. What they give a client:
// evidence, checkable against the published key, that this service decided this outcome for
// this activity over these approvals and this organization state.
import { createHash } from "node:crypto";
import { p256 } from "@noble/curves/nist.js";
import type { MasterKey } from "../crypto/envelope.ts";
import type { Executor } from "../store/schema.ts";
import { AAD } from "../crypto/aad.ts";

export const APP_PROOF_SCHEME = "SIGNATURE_SCHEME_EPHEMERAL_KEY_P256";
const META_KEY = "app_proof_key";
const KEY_AAD = AAD.appProofKey;

export interface AppProof {
  scheme: string;
  /** Hex of 130 bytes: uncompressed encryption key ‖ uncompressed signing key (P-256). */
  publicKey: string;
  /** JSON text; the signature covers SHA-256 of its UTF-8 bytes. */
  proofPayload: string;
  /** Hex r‖s (64 bytes, low-S). */
  signature: string;
}

export interface AppProofKey {
  publicKey: string;
  secretKey: Uint8Array;
}

/** The store's proof key once opened (one holder per store, on the service state). */
export class AppProofKeyCache {
  key: AppProofKey | undefined;
}

/** The service's proof key, created on first use and stored sealed with the master key. */
export async function appProofKey(cache: AppProofKeyCache, db: Executor, master: MasterKey): Promise<AppProofKey> {
  if (cache.key) return cache.key;
  let row = await db.selectFrom("sigil_meta").select("value").where("key", "=", META_KEY).executeTakeFirst();
  if (!row) {
    const signing = p256.utils.randomSecretKey();
    // The first half is an encryption key in the upstream format; nothing is encrypted to it here.
    const encryption = p256.utils.randomSecretKey();
    const publicKey = Buffer.concat([p256.getPublicKey(encryption, false), p256.getPublicKey(signing, false)]).toString("hex");
    const value = JSON.stringify({ publicKey, sealed: await master.seal(Buffer.from(signing), KEY_AAD) });
    await db
      .insertInto("sigil_meta")
      .values({ key: META_KEY, value })
      .onConflict((oc) => oc.column("key").doNothing())
      .execute();
    row = await db.selectFrom("sigil_meta").select("value").where("key", "=", META_KEY).executeTakeFirstOrThrow();
  }
  const stored = JSON.parse(row.value) as { publicKey: string; sealed: string };
  cache.key = { publicKey: stored.publicKey, secretKey: new Uint8Array(await master.open(stored.sealed, KEY_AAD)) };
  return cache.key;
}

export const sha256Hex = (data: string): string => createHash("sha256").update(data).digest("hex");

export interface PolicyOutcomeFacts {
  organizationId: string;
  outcome: string;
  /** What was decided: the activity and the votes it was decided over. */
  decisionContext: unknown;
  /** The deciding organization's state: policy set and root quorum. */
  organizationData: unknown;
  parentOrganizationData: unknown; // undefined without a parent
  userRequestApprovals: { userId: string; publicKey: string; scheme: string }[];
  timestampMs: number;
}

export function signProof(key: AppProofKey, payload: unknown): AppProof {
  const proofPayload = JSON.stringify(payload);
  const digest = createHash("sha256").update(proofPayload, "utf8").digest();
  const signature = p256.sign(digest, key.secretKey, { prehash: false });
  return { scheme: APP_PROOF_SCHEME, publicKey: key.publicKey, proofPayload, signature: Buffer.from(signature).toString("hex") };
}

export function policyOutcomeProof(key: AppProofKey, f: PolicyOutcomeFacts): AppProof {
  return signProof(key, {
    type: "APP_PROOF_TYPE_POLICY_OUTCOME",
    policyOutcomeProof: {
      organizationId: f.organizationId,
      outcome: f.outcome,
      decisionContextDigest: sha256Hex(JSON.stringify(f.decisionContext)),
      organizationDataDigest: sha256Hex(JSON.stringify(f.organizationData)),
      parentOrganizationDataDigest: f.parentOrganizationData === undefined ? "" : sha256Hex(JSON.stringify(f.parentOrganizationData)),
      userRequestApprovals: f.userRequestApprovals,
    },
    timestampMs: String(f.timestampMs),
  });
}

/** The published proof key (for the discovery route). */
export async function appProofKeys(
  cache: AppProofKeyCache,
  db: Executor,
  master: MasterKey,
): Promise<{ keys: { publicKey: string; scheme: string }[] }> {
  const key = await appProofKey(cache, db, master);
  return { keys: [{ publicKey: key.publicKey, scheme: APP_PROOF_SCHEME }] };
}
