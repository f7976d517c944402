// sigil seed: builds a large organization directly in the store, to measure how request cost
// grows with data (bench/data-size.ts, docs/benchmarks.md §3). Not for production databases: it writes
// millions of rows and relaxes durability while it does (a crash means seeding again).
//
//   sigil seed [--name "<org>"] [--suborgs N] [--activities N] [--users N] [--scale F]
//              [--batch N] [--wallet-every N] [--oidc-issuer URL] [--sign-votes] [--json]
//
// The organization is created like `sigil init` (root user, one P-256 API key, root quorum
// 1/1), then gets, all created "in the past" (before now, oldest first):
//   - N sub-organizations (default 1,000,000), each with one root user (root quorum 1/1);
//     of those root users 1/2 have an email, 1/10 a phone number and 1/10 a P-256 API key,
//     1/20 a passkey and 1/20 an OIDC identity; one sub-organization in `--wallet-every`
//     (default 1,000) a wallet with one Ethereum account, derived from a real mnemonic;
//   - N activities of the organization (default 1,000,000), create_user_tag records
//     submitted by the root user as the API writes them: the activity, its vote and its
//     policy evaluation. The vote carries the stamp's shape; its signature is real only with
//     --sign-votes (~0.1 ms more per activity);
//   - N users of the organization (default 10,000, the root user included), 1/2 with an
//     email, 1/10 with an API key.
// --scale F multiplies the three defaults (0.01: 10,000 sub-organizations...). Rows are
// written in transactions of --batch sub-organizations/activities/users (default 5,000):
// by the store engine's bulk writer (SQLite: one prepared insert per table in a loop; PostgreSQL: one multi-row
// INSERT … SELECT FROM unnest(…) per table and batch).
//
// --json prints the credentials (as `sigil init --json` does) and sample values that hit
// each list_suborgs filter, and the seeding times per table.
import { createECDH, createHash, createPrivateKey, randomBytes, randomUUID, sign, type KeyObject } from "node:crypto";
import { openService } from "../service.ts";
import { generateP256KeyPair } from "../crypto/keygen.ts";
import { insertOrganization, setRootQuorum } from "../store/organizations.ts";
import { addUsers } from "../activities/users/new-users.ts";
import { deriveAccounts } from "../wallets/accounts.ts";
import { generateMnemonic, seedOfAsync } from "../wallets/derivation.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import { flag } from "./args.ts";
import { engineFor } from "../store/engines.ts";
import type { BulkRows } from "../store/engine.ts";
import { AAD } from "../crypto/aad.ts";

function count(argv: string[], name: string, dflt: number, max = 100_000_000): number {
  const v = flag(argv, name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`${name} must be an integer in [0, ${max}], got ${v}`);
  return n;
}

export interface SeedPlan {
  name: string;
  suborgs: number;
  activities: number;
  users: number;
  batch: number;
  walletEvery: number;
  oidcIssuer: string;
  signVotes: boolean;
}

export function seedPlan(argv: string[]): SeedPlan {
  const scaleArg = flag(argv, "--scale");
  const scale = scaleArg === undefined ? 1 : Number(scaleArg);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 100) throw new Error(`--scale must be a number in (0, 100], got ${scaleArg}`);
  const name = flag(argv, "--name") ?? "Seeded Org";
  if (!name.trim() || name.length > 256) throw new Error("--name must be 1 to 256 characters");
  return {
    name,
    suborgs: count(argv, "--suborgs", Math.round(1_000_000 * scale)),
    activities: count(argv, "--activities", Math.round(1_000_000 * scale)),
    // The root user counts: at least one.
    users: Math.max(1, count(argv, "--users", Math.round(10_000 * scale))),
    batch: Math.max(1, count(argv, "--batch", 5_000, 100_000)),
    walletEvery: Math.max(1, count(argv, "--wallet-every", 1_000)),
    oidcIssuer: (flag(argv, "--oidc-issuer") ?? "https://issuer.seed.invalid").replace(/\/+$/, ""),
    signVotes: argv.includes("--sign-votes"),
  };
}

// ---------------------------------------------------------------- ids and keys

/**
 * UUIDv7 for a given millisecond (ids of seeded rows are in creation order, as the API's
 * ordered ids are): 48-bit time, 12 bits of a per-call sequence, then random bits.
 */
function uuid7(ms: number, seq: number): string {
  const tail = randomUUID().replace(/-/g, "").slice(16);
  const h = ms.toString(16).padStart(12, "0") + (0x7000 | (seq & 0xfff)).toString(16) + tail;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A real P-256 key pair: compressed and uncompressed public points (hex). */
function p256Point(): { compressed: string; x: Buffer; y: Buffer } {
  const e = createECDH("prime256v1");
  e.generateKeys();
  const u = e.getPublicKey();
  return { compressed: e.getPublicKey("hex", "compressed"), x: u.subarray(1, 33), y: u.subarray(33, 65) };
}

/** The COSE_Key (EC2, ES256) of a P-256 point, b64url: what registration stores for a passkey. */
function coseKey(x: Buffer, y: Buffer): string {
  return Buffer.concat([Buffer.from("a5010203262001215820", "hex"), x, Buffer.from("225820", "hex"), y]).toString("base64url");
}

function signerOf(publicKey: string, privateKey: string): KeyObject {
  const e = createECDH("prime256v1");
  e.setPrivateKey(Buffer.from(privateKey.padStart(64, "0"), "hex"));
  const u = e.getPublicKey();
  if (e.getPublicKey("hex", "compressed") !== publicKey.toLowerCase()) throw new Error("seed: API key pair does not match");
  return createPrivateKey({
    key: {
      kty: "EC",
      crv: "P-256",
      x: u.subarray(1, 33).toString("base64url"),
      y: u.subarray(33).toString("base64url"),
      d: Buffer.from(privateKey.padStart(64, "0"), "hex").toString("base64url"),
    },
    format: "jwk",
  });
}

// ---------------------------------------------------------------- bulk writers

// The store's engine writes the rows (StorageEngine.bulkWriter, docs/storage.md §2).
type Value = string | number | null;
type Rows = BulkRows;

const SEEDED_TABLES = [
  "organizations",
  "users",
  "root_quorum_members",
  "api_keys",
  "authenticators",
  "oauth_providers",
  "wallets",
  "wallet_accounts",
  "activities",
  "votes",
  "policy_evaluations",
];

/** Integer columns of the seeded tables (the rest are text); a batch of NULLs still needs its type. */
const NUMERIC_COLUMNS = new Set([
  "created_at",
  "updated_at",
  "expires_at",
  "root_quorum_threshold",
  "policy_version",
  "ip_allowlist_version",
  "sign_count",
  "mnemonic_length",
  "imported",
  "exported",
]);

// ---------------------------------------------------------------- rows

const ORG_COLS = [
  "id",
  "name",
  "parent_id",
  "root_quorum_threshold",
  "settings",
  "policy_version",
  "ip_allowlist_version",
  "created_at",
  "updated_at",
] as const;
const USER_COLS = ["id", "organization_id", "name", "email", "email_normalized", "phone", "created_at", "updated_at"] as const;
const QUORUM_COLS = ["organization_id", "user_id"] as const;
const API_KEY_COLS = [
  "id",
  "organization_id",
  "user_id",
  "name",
  "public_key",
  "public_key_normalized",
  "curve",
  "credential_type",
  "expiration_seconds",
  "expires_at",
  "created_at",
  "updated_at",
] as const;
const AUTHENTICATOR_COLS = [
  "id",
  "organization_id",
  "user_id",
  "name",
  "credential_id",
  "credential_id_normalized",
  "public_key",
  "attestation_type",
  "aaguid",
  "transports",
  "sign_count",
  "created_at",
  "updated_at",
] as const;
const OAUTH_COLS = [
  "id",
  "organization_id",
  "user_id",
  "provider_name",
  "issuer",
  "audience",
  "subject",
  "created_at",
  "updated_at",
] as const;
const WALLET_COLS = [
  "id",
  "organization_id",
  "name",
  "seed_sealed",
  "mnemonic_length",
  "imported",
  "exported",
  "created_at",
  "updated_at",
] as const;
const ACCOUNT_COLS = [
  "id",
  "wallet_id",
  "organization_id",
  "curve",
  "path_format",
  "path",
  "address_format",
  "address",
  "public_key",
  "name",
  "created_at",
  "updated_at",
] as const;
const ACTIVITY_COLS = [
  "id",
  "organization_id",
  "type",
  "status",
  "fingerprint",
  "intent",
  "result",
  "failure",
  "submitted_by",
  "app_proofs",
  "created_at",
  "updated_at",
] as const;
const VOTE_COLS = [
  "id",
  "activity_id",
  "user_id",
  "user_organization_id",
  "selection",
  "message",
  "public_key",
  "signature",
  "scheme",
  "credential_id",
  "credential_type",
  "created_at",
] as const;
const EVALUATION_COLS = ["id", "activity_id", "organization_id", "vote_id", "policy_set_id", "outcomes", "outcome", "created_at"] as const;

const ETH_ACCOUNT = {
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/60'/0'/0/0",
  addressFormat: "ADDRESS_FORMAT_ETHEREUM",
} as const;

/** Which sub-organizations carry what (by index): every filter of list_suborgs has hits. */
export const SUBORG_MIX = {
  email: (i: number) => i % 2 === 0,
  phone: (i: number) => i % 10 === 3,
  apiKey: (i: number) => i % 10 === 7,
  passkey: (i: number) => i % 20 === 11,
  oidc: (i: number) => i % 20 === 13,
};

export interface SeedSamples {
  /** Values that each match exactly one seeded sub-organization (`suborgId`). */
  filters: Record<string, { value: string; suborgId: string }>;
  /** An OIDC identity of a seeded root user: mint a token for it to try the OIDC_TOKEN filter. */
  oidcIdentity?: { issuer: string; audience: string; subject: string; suborgId: string };
  /** A sub-organization 90% into the (oldest-first) list (at least 10 before its end): a deep `after` cursor. */
  deepSuborgId?: string;
  /** An activity 90% into the (newest-first) list (at least 10 before its end): a deep `after` cursor. */
  deepActivityId?: string;
  /** A seeded user of the organization with an email and an API key. */
  userId?: string;
}

export interface SeedResult {
  organizationId: string;
  userId: string;
  apiKeyId: string;
  apiPublicKey: string;
  apiPrivateKey: string;
  engine: string;
  counts: { suborgs: number; activities: number; users: number; rows: number };
  seconds: { suborgs: number; activities: number; users: number; finish: number; total: number };
  samples: SeedSamples;
}

const USAGE = `usage: sigil seed [flags]   (bulk test data for benchmarks; not for production databases)
  --name "<org>"        name of the seeded root organization (default "Seeded Org")
  --scale F             multiplies the default sizes below (0.01: 10,000 sub-organizations)
  --suborgs N           sub-organizations, each with a root user (default 1,000,000)
  --activities N        completed create_user_tag activities with their votes (default 1,000,000)
  --users N             users of the organization, root user included (default 10,000)
  --batch N             rows per batch and table (default 5,000)
  --wallet-every N      one sub-organization in N gets a real wallet (default 1,000)
  --oidc-issuer URL     issuer of the seeded OIDC identities (default https://issuer.seed.invalid)
  --sign-votes          sign every vote for real (~0.1 ms more per activity)
  --json                print credentials, sample filter values and timings as JSON
The store is chosen as for sigil serve (DATABASE_URL / SIGIL_DATA_DIR, SIGIL_MASTER_KEY).
`;

export async function seed(argv: string[]): Promise<void> {
  if (argv.includes("--help")) {
    process.stdout.write(USAGE);
    return;
  }
  const plan = seedPlan(argv);
  const json = argv.includes("--json");
  const out = await runSeed(argv, plan, json ? () => {} : (m) => process.stderr.write(m + "\n"));
  if (json) {
    process.stdout.write(JSON.stringify(out) + "\n");
  } else {
    process.stdout.write(
      [
        `Seeded organization "${plan.name}" (${out.engine}) in ${out.seconds.total.toFixed(1)} s`,
        `  organizationId  ${out.organizationId}`,
        `  root userId     ${out.userId}`,
        `  apiPublicKey    ${out.apiPublicKey}`,
        `  apiPrivateKey   ${out.apiPrivateKey}   <- shown once; keep it secret`,
        `  sub-organizations ${out.counts.suborgs} (${out.seconds.suborgs.toFixed(1)} s), activities ${out.counts.activities} (${out.seconds.activities.toFixed(1)} s), users ${out.counts.users} (${out.seconds.users.toFixed(1)} s), ${out.counts.rows} rows`,
        "",
      ].join("\n"),
    );
  }
}

export async function runSeed(argv: string[], plan: SeedPlan, progress: (m: string) => void): Promise<SeedResult> {
  const t0 = performance.now();
  const service = await openService(argv);
  const engine = service.store.engine;
  const pair = generateP256KeyPair();
  // Everything seeded lies in the past, oldest first; the root organization before all of it.
  const span = plan.suborgs + plan.activities + plan.users + 10;
  const start = Date.now() - span - 60_000;
  const organizationId = uuid7(start, 0);
  let userId: string;
  let apiKeyId: string;
  try {
    ({ userId, apiKeyId } = await service.store.db.transaction().execute(async (tx) => {
      await insertOrganization(tx, {
        id: organizationId,
        name: plan.name,
        parent_id: null,
        root_quorum_threshold: 1,
        policy_version: 0,
        settings: "{}",
        created_at: start,
        updated_at: start,
      });
      const [uid] = await addUsers(
        tx,
        organizationId,
        [
          {
            userName: "root",
            apiKeys: [{ apiKeyName: "root", publicKey: pair.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        start,
        "root user",
      );
      await setRootQuorum(tx, organizationId, [uid!]);
      const key = await tx.selectFrom("api_keys").select("id").where("user_id", "=", uid!).executeTakeFirstOrThrow();
      return { userId: uid!, apiKeyId: key.id };
    }));
  } finally {
    await service.store.close();
  }
  const writer = await engineFor(service.config.databaseUrl).bulkWriter({
    databaseUrl: service.config.databaseUrl,
    dataDir: service.config.dataDir,
    tables: SEEDED_TABLES,
    integerColumns: NUMERIC_COLUMNS,
  });
  const samples: SeedSamples = { filters: {} };
  let rows = 0;
  const write = async (tables: Rows[]) => {
    for (const t of tables) rows += t.rows.length;
    await writer.write(tables);
  };
  const seconds = { suborgs: 0, activities: 0, users: 0, finish: 0, total: 0 };
  try {
    let t = performance.now();
    await seedSuborgs(plan, organizationId, start + 1, service.masterKey, write, samples, progress);
    seconds.suborgs = (performance.now() - t) / 1000;
    t = performance.now();
    await seedUsers(plan, organizationId, start + 1 + plan.suborgs, write, samples);
    seconds.users = (performance.now() - t) / 1000;
    t = performance.now();
    await seedActivities(plan, organizationId, userId, apiKeyId, pair, start + 1 + plan.suborgs + plan.users, write, samples, progress);
    seconds.activities = (performance.now() - t) / 1000;
    t = performance.now();
    await writer.finish();
    seconds.finish = (performance.now() - t) / 1000;
  } finally {
    await writer.close();
  }
  seconds.total = (performance.now() - t0) / 1000;
  return {
    organizationId,
    userId,
    apiKeyId,
    apiPublicKey: pair.publicKey,
    apiPrivateKey: pair.privateKey,
    engine,
    counts: { suborgs: plan.suborgs, activities: plan.activities, users: plan.users, rows },
    seconds,
    samples,
  };
}

type Write = (tables: Rows[]) => Promise<void>;

async function seedSuborgs(
  plan: SeedPlan,
  parentId: string,
  t0: number,
  masterKey: MasterKey,
  write: Write,
  samples: SeedSamples,
  progress: (m: string) => void,
) {
  const mid = Math.floor(plan.suborgs / 2);
  for (let from = 0; from < plan.suborgs; from += plan.batch) {
    const to = Math.min(plan.suborgs, from + plan.batch);
    const orgs: Value[][] = [];
    const users: Value[][] = [];
    const quorum: Value[][] = [];
    const keys: Value[][] = [];
    const passkeys: Value[][] = [];
    const oauth: Value[][] = [];
    const wallets: Value[][] = [];
    const accounts: Value[][] = [];
    for (let i = from; i < to; i++) {
      const at = t0 + i;
      const orgId = uuid7(at, 0);
      const userId = uuid7(at, 1);
      orgs.push([orgId, `seed-suborg-${i}`, parentId, 1, "{}", 0, 0, at, at]);
      const email = SUBORG_MIX.email(i) ? `user-${i}@seed.example` : null;
      const phone = SUBORG_MIX.phone(i) ? `+1555${String(i).padStart(7, "0")}` : null;
      users.push([userId, orgId, `user-${i}`, email, email, phone, at, at]);
      quorum.push([orgId, userId]);
      const sample = (filter: string, value: string) => {
        if (i >= mid && !samples.filters[filter]) samples.filters[filter] = { value, suborgId: orgId };
      };
      sample("NAME", `seed-suborg-${i}`);
      sample("USERNAME", `user-${i}`);
      if (email) sample("EMAIL", email);
      if (phone) sample("PHONE_NUMBER", phone);
      if (SUBORG_MIX.apiKey(i)) {
        const k = p256Point();
        keys.push([
          uuid7(at, 2),
          orgId,
          userId,
          "seed key",
          k.compressed,
          k.compressed,
          "API_KEY_CURVE_P256",
          "CREDENTIAL_TYPE_API_KEY_P256",
          null,
          null,
          at,
          at,
        ]);
        sample("PUBLIC_KEY", k.compressed);
      }
      if (SUBORG_MIX.passkey(i)) {
        const k = p256Point();
        const credentialId = randomBytes(16).toString("base64url");
        passkeys.push([
          uuid7(at, 3),
          orgId,
          userId,
          "seed passkey",
          credentialId,
          credentialId,
          coseKey(k.x, k.y),
          "none",
          "00000000-0000-0000-0000-000000000000",
          '["AUTHENTICATOR_TRANSPORT_INTERNAL"]',
          0,
          at,
          at,
        ]);
        sample("CREDENTIAL_ID", credentialId);
      }
      if (SUBORG_MIX.oidc(i)) {
        const subject = `seed-subject-${i}`;
        oauth.push([uuid7(at, 4), orgId, userId, "seed-idp", plan.oidcIssuer, "seed-client", subject, at, at]);
        if (i >= mid && !samples.oidcIdentity)
          samples.oidcIdentity = { issuer: plan.oidcIssuer, audience: "seed-client", subject, suborgId: orgId };
      }
      if (i % plan.walletEvery === plan.walletEvery - 1) {
        // A real wallet: the mnemonic sealed as create_wallet seals it, the account derived from it.
        const walletId = uuid7(at, 5);
        const mnemonic = generateMnemonic(12);
        const seed = await seedOfAsync(mnemonic);
        const [acct] = deriveAccounts(seed, [ETH_ACCOUNT]);
        seed.fill(0);
        wallets.push([
          walletId,
          orgId,
          "seed wallet",
          await masterKey.seal(Buffer.from(mnemonic, "utf8"), AAD.walletSeed(walletId)),
          12,
          0,
          0,
          at,
          at,
        ]);
        accounts.push([
          uuid7(at, 6),
          walletId,
          orgId,
          ETH_ACCOUNT.curve,
          ETH_ACCOUNT.pathFormat,
          acct!.path,
          ETH_ACCOUNT.addressFormat,
          acct!.address,
          acct!.publicKey,
          null,
          at,
          at,
        ]);
        if (i >= mid && !samples.filters.WALLET_ACCOUNT_ADDRESS)
          samples.filters.WALLET_ACCOUNT_ADDRESS = { value: acct!.address, suborgId: orgId };
      }
      if (i === Math.max(0, Math.min(Math.floor(plan.suborgs * 0.9), plan.suborgs - 11))) samples.deepSuborgId = orgId;
    }
    await write([
      { table: "organizations", columns: ORG_COLS, rows: orgs },
      { table: "users", columns: USER_COLS, rows: users },
      { table: "root_quorum_members", columns: QUORUM_COLS, rows: quorum },
      { table: "api_keys", columns: API_KEY_COLS, rows: keys },
      { table: "authenticators", columns: AUTHENTICATOR_COLS, rows: passkeys },
      { table: "oauth_providers", columns: OAUTH_COLS, rows: oauth },
      { table: "wallets", columns: WALLET_COLS, rows: wallets },
      { table: "wallet_accounts", columns: ACCOUNT_COLS, rows: accounts },
    ]);
    if ((to / plan.batch) % 20 === 0 || to === plan.suborgs) progress(`  sub-organizations: ${to}/${plan.suborgs}`);
  }
}

async function seedUsers(plan: SeedPlan, orgId: string, t0: number, write: Write, samples: SeedSamples) {
  // The root user is one of plan.users.
  for (let from = 1; from < plan.users; from += plan.batch) {
    const to = Math.min(plan.users, from + plan.batch);
    const users: Value[][] = [];
    const keys: Value[][] = [];
    for (let i = from; i < to; i++) {
      const at = t0 + i;
      const id = uuid7(at, 0);
      const email = i % 2 === 0 ? `member-${i}@org.seed.example` : null;
      users.push([id, orgId, `member-${i}`, email, email, null, at, at]);
      if (i % 10 === 0) {
        const k = p256Point();
        keys.push([
          uuid7(at, 1),
          orgId,
          id,
          "member key",
          k.compressed,
          k.compressed,
          "API_KEY_CURVE_P256",
          "CREDENTIAL_TYPE_API_KEY_P256",
          null,
          null,
          at,
          at,
        ]);
        if (!samples.userId && i >= plan.users / 2) samples.userId = id;
      }
    }
    await write([
      { table: "users", columns: USER_COLS, rows: users },
      { table: "api_keys", columns: API_KEY_COLS, rows: keys },
    ]);
  }
}

async function seedActivities(
  plan: SeedPlan,
  orgId: string,
  userId: string,
  apiKeyId: string,
  pair: { publicKey: string; privateKey: string },
  t0: number,
  write: Write,
  samples: SeedSamples,
  progress: (m: string) => void,
) {
  const signer = plan.signVotes ? signerOf(pair.publicKey, pair.privateKey) : undefined;
  // Without --sign-votes every vote carries this one DER signature (of another message).
  const placeholder = sign("sha256", Buffer.from("sigil seed"), {
    key: signerOf(pair.publicKey, pair.privateKey),
    dsaEncoding: "der",
  }).toString("hex");
  const tag = randomBytes(4).toString("hex");
  for (let from = 0; from < plan.activities; from += plan.batch) {
    const to = Math.min(plan.activities, from + plan.batch);
    const acts: Value[][] = [];
    const votes: Value[][] = [];
    const evals: Value[][] = [];
    for (let i = from; i < to; i++) {
      const at = t0 + i;
      const id = uuid7(at, 0);
      const voteId = uuid7(at, 1);
      const params = { userTagName: `seed-${tag}-${i}`, userIds: [] as string[] };
      // The body the SDK would have sent (sdk-server's field order).
      const body = JSON.stringify({
        parameters: params,
        organizationId: orgId,
        timestampMs: String(at),
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      });
      const fingerprint = createHash("sha256").update(body).digest("hex");
      acts.push([
        id,
        orgId,
        "ACTIVITY_TYPE_CREATE_USER_TAG",
        "ACTIVITY_STATUS_COMPLETED",
        fingerprint,
        JSON.stringify(params),
        JSON.stringify({ userTagId: uuid7(at, 2), userIds: [] }),
        null,
        userId,
        null,
        at,
        at,
      ]);
      const signature = signer ? sign("sha256", Buffer.from(body), { key: signer, dsaEncoding: "der" }).toString("hex") : placeholder;
      votes.push([
        voteId,
        id,
        userId,
        orgId,
        "VOTE_SELECTION_APPROVED",
        body,
        pair.publicKey,
        signature,
        "SIGNATURE_SCHEME_TK_API_P256",
        apiKeyId,
        "CREDENTIAL_TYPE_API_KEY_P256",
        at,
      ]);
      evals.push([uuid7(at, 3), id, orgId, voteId, "empty", "", "OUTCOME_ALLOW", at]);
      // Newest first: the oldest tenth lies 90% deep.
      if (i === Math.min(Math.max(Math.floor(plan.activities * 0.1), 10), plan.activities - 1)) samples.deepActivityId = id;
    }
    await write([
      { table: "activities", columns: ACTIVITY_COLS, rows: acts },
      { table: "votes", columns: VOTE_COLS, rows: votes },
      { table: "policy_evaluations", columns: EVALUATION_COLS, rows: evals },
    ]);
    if ((to / plan.batch) % 20 === 0 || to === plan.activities) progress(`  activities: ${to}/${plan.activities}`);
  }
}
