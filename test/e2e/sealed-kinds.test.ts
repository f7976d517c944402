// Every kind of sealed value in SEALED_KINDS (docs/custody.md §2), walked on both engines: the
// real server (child process) and the official SDK make at least one row of each kind — wallet
// mnemonics, a private key, the service keys, an OTP's target key (init_otp_auth, the code read
// from a real SMTP server), an import target, an OAuth client secret, the auth proxy key, a
// webhook signing key (`sigil webhook-keys rotate`), secret parameters in an intent and a vote
// (otp_auth's code), and the sigil_meta entries (the root secret appears when the key held in
// memory is rotated: `sigil master-key rotate`). Then, for every kind: values were found, each
// names the current key, opens under its own row's associated data and under no other row's
// (nor another kind's). And every `*_sealed` column of the schema is one SEALED_KINDS lists.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { sql } from "kysely";
import { Turnkey } from "@turnkey/sdk-server";
import { encryptOauth2ClientSecret } from "@turnkey/crypto";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { stampedPost } from "../helpers/raw-http.ts";
import { SmtpSink, codeFrom } from "../helpers/smtp-sink.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { MasterKey } from "../../src/crypto/envelope.ts";
import { SEALED_KINDS } from "../../src/crypto/sealed-columns.ts";
import { openStore, type Store } from "../../src/store/db.ts";

const ETH0 = {
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/60'/0'/0/0",
  addressFormat: "ADDRESS_FORMAT_ETHEREUM",
} as const;
const EMAIL = "sealed.kinds@example.com";
const BIN = path.resolve(import.meta.dirname, "../../bin/sigil.mjs");
const ROOT = path.resolve(import.meta.dirname, "../..");
const runCli = (args: string[], env: NodeJS.ProcessEnv) => promisify(execFile)(process.execPath, [BIN, ...args], { env, cwd: ROOT });

type Found = { kind: string; sealed: string; aad: string };

/** Every value SEALED_KINDS finds in the store, kind by kind. */
async function walk(store: Store): Promise<Map<string, Found[]>> {
  const found = new Map<string, Found[]>(SEALED_KINDS.map((k) => [k.name, []]));
  for (const kind of SEALED_KINDS) {
    let q = store.db.selectFrom(kind.table as never).selectAll();
    if (kind.where) q = q.where(kind.where.column as never, "=", kind.where.value as never);
    for (const row of (await q.execute()) as Record<string, unknown>[]) {
      for (const v of kind.values(row)) found.get(kind.name)!.push({ kind: kind.name, ...v });
    }
  }
  return found;
}

/** Every `table.column` of the schema whose column name ends in `_sealed`, from the engine's own catalogue. */
async function sealedColumns(store: Store, engine: string): Promise<string[]> {
  if (engine === "postgres") {
    const { rows } = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and column_name like '%\_sealed'`.execute(store.db);
    return rows.map((r) => `${r.table_name}.${r.column_name}`);
  }
  const { rows: tables } = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(store.db);
  const out: string[] = [];
  for (const t of tables) {
    const { rows } = await sql<{ name: string }>`select name from pragma_table_info(${t.name})`.execute(store.db);
    for (const c of rows) if (c.name.endsWith("_sealed")) out.push(`${t.name}.${c.name}`);
  }
  return out;
}

for (const engine of engines()) {
  describe(`every sealed kind, made through the server and walked (${engine.name})`, { skip: engine.skip, timeout: 240_000 }, () => {
    let inst: Instance;
    let server: RunningServer | undefined;
    let sink: SmtpSink;
    let init: InitResult;
    let store: Store | undefined;

    before(async () => {
      sink = await SmtpSink.start();
      inst = await newInstance(engine.name, { SMTP_URL: sink.url, SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>" });
      init = await sigilInit(inst, ["--name", "Sealed Kinds Org"]);
      server = await startServer(inst);
    });
    after(async () => {
      await store?.close();
      await server?.stop();
      await sink?.stop();
      await inst?.cleanup();
    });

    it("a row of every kind, each value on the current key, opening only in its own row; every *_sealed column listed", async (t) => {
      const rootKey = { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey };
      const client = () =>
        new Turnkey({
          apiBaseUrl: server!.url,
          apiPublicKey: rootKey.publicKey,
          apiPrivateKey: rootKey.privateKey,
          defaultOrganizationId: init.organizationId,
        }).apiClient();
      const c = client();
      const submit = async (op: string, type: string, parameters: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
        const res = await stampedPost(
          server!.url,
          `/public/v1/submit/${op}`,
          JSON.stringify({ type, timestampMs: String(Date.now()), organizationId: init.organizationId, parameters, ...extra }),
          rootKey,
        );
        assert.equal(res.status, 200, `${op}: ${res.text}`);
      };

      // Wallet mnemonics (the sub-organization's and one more), a private key.
      const sub = await c.createSubOrganization({
        subOrganizationName: `sealed-${randomBytes(3).toString("hex")}`,
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "u", userEmail: EMAIL, apiKeys: [], authenticators: [], oauthProviders: [] }],
        wallet: { walletName: "main", accounts: [ETH0] },
      });
      await c.createWallet({ walletName: "w", accounts: [ETH0] });
      await c.createPrivateKeys({
        privateKeys: [{ privateKeyName: "pk", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: [] }],
      });
      // An import target.
      await c.initImportWallet({ userId: init.userId });
      // An OAuth client secret, encrypted to the published key as a backend does.
      const keys = (await (await fetch(`${server!.url}/public/v1/discovery/keys`)).json()) as {
        keys: { purpose: string; publicKey: string; status?: string }[];
      };
      const secretKey = keys.keys.find((k) => k.purpose === "OAUTH2_CLIENT_SECRET" && (k.status === undefined || k.status === "active"))!;
      await c.createOauth2Credential({
        provider: "OAUTH2_PROVIDER_X",
        clientId: "sealed-kinds-client",
        encryptedClientSecret: await encryptOauth2ClientSecret(randomBytes(16).toString("hex"), secretKey.publicKey),
      });
      // The auth proxy key; the app proof key (a submission asking for a proof).
      await submit("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {});
      await submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "proved", userIds: [] }, { generateAppProofs: true });
      // An OTP's target key, and otp_auth's code sealed in its intent and its vote.
      const mark = sink.mark();
      const { otpId } = await c.initOtpAuth({
        organizationId: sub.subOrganizationId,
        otpType: "OTP_TYPE_EMAIL",
        contact: EMAIL,
        appName: "Sealed Kinds",
      });
      const code = codeFrom(await sink.nextMail(EMAIL, mark));
      const auth = await c.otpAuth({
        organizationId: sub.subOrganizationId,
        otpId,
        otpCode: code,
        targetPublicKey: generateP256KeyPair().publicKey,
      });
      assert.ok(auth.credentialBundle, "otp_auth completed");
      // A webhook signing key.
      await runCli(["webhook-keys", "rotate"], inst.env);
      await server!.stop();

      // A rotation away from the key held in memory: its bytes are sealed as the root secret (docs/custody.md §4),
      // and every value is re-wrapped under the new key.
      const previous = inst.env.SIGIL_MASTER_KEY!;
      const current = randomBytes(32).toString("hex");
      Object.assign(inst.env, { SIGIL_MASTER_KEY: current, SIGIL_MASTER_KEY_PREVIOUS: previous });
      server = await startServer(inst);
      const rotated = JSON.parse((await runCli(["master-key", "rotate"], inst.env)).stdout) as { done: boolean; remaining: number };
      assert.deepEqual([rotated.done, rotated.remaining], [true, 0], JSON.stringify(rotated));
      await server.stop();
      server = undefined;

      const master = MasterKey.parse(current);
      store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined });
      const found = await walk(store);
      const all = [...found.values()].flat();
      t.diagnostic(`values per kind: ${[...found].map(([k, l]) => `${k} ${l.length}`).join(", ")}`);
      for (const kind of SEALED_KINDS) {
        const values = found.get(kind.name)!;
        assert.ok(values.length > 0, `${kind.name}: at least one value stored`);
        for (const v of values) {
          assert.equal(MasterKey.kekIdOf(v.sealed), master.id, `${kind.name}: names the current key`);
          assert.ok((await master.open(v.sealed, v.aad)).length > 0, `${kind.name}: opens in its own row`);
          // Under another row's binding — the same kind's when there is one, else another kind's — it does not open.
          const others = all.filter((o) => o.aad !== v.aad);
          const other = others.find((o) => o.kind === v.kind) ?? others[0]!;
          await assert.rejects(master.open(v.sealed, other.aad), `${kind.name}: does not open as ${other.kind} (${other.aad})`);
        }
      }

      // A sealed column the list does not name would be missed by this walk and by a rotation.
      const listed = new Set(SEALED_KINDS.map((k) => `${k.table}.${k.column}`));
      const columns = await sealedColumns(store, engine.name);
      assert.ok(columns.length >= 8, `the catalogue names the *_sealed columns: ${columns.join(", ")}`);
      assert.deepEqual(columns.filter((col) => !listed.has(col)).sort(), [], "every *_sealed column is in SEALED_KINDS");
    });
  });
}
