// The `pkcs11` master-key source end to end (docs/custody.md): a real SoftHSM2 token made by
// the test set-up, the real server (child process, `sigil init` then `sigil serve`) with its
// key-encryption key on the token, and the official SDK only, on both engines. Sign-up with a
// wallet, wallet and private key creation, signing (verified), export (decrypted with
// @turnkey/crypto); no master.key and no SIGIL_MASTER_KEY anywhere, every sealed value in the
// database names the token's key; the token unplugged while serving: what needs a secret
// answers 503 (UNAVAILABLE, nothing recorded) while queries answer, and the service recovers
// within 5 s of the token's return; without the token, the same data directory and database
// open nothing; the auth proxy (OTP, sign-up, login) with the key on the token.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { Turnkey } from "@turnkey/sdk-server";
import { decryptExportBundle, generateP256KeyPair } from "@turnkey/crypto";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import {
  engines,
  newInstance,
  rejection,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { assertSecretsNowhere, type Secret } from "../helpers/secrets-grep.ts";
import { newSoftToken, SOFTHSM_LIBRARY, type SoftToken } from "../helpers/softhsm.ts";
import { startProxyStack, type ProxyStack } from "../helpers/proxy-stack.ts";
import { Pkcs11Kek, pkcs11KeyId } from "../../src/crypto/pkcs11/token.ts";
import { isKeyUnavailable } from "../../src/crypto/key-unavailable.ts";
import { MasterKey } from "../../src/crypto/envelope.ts";
import { SEALED_KINDS } from "../../src/crypto/sealed-columns.ts";
import { openStore } from "../../src/store/db.ts";
import { addressOf, deriveKey, seedOf } from "../../src/wallets/derivation.ts";

const ETH0 = {
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/60'/0'/0/0",
  addressFormat: "ADDRESS_FORMAT_ETHEREUM",
} as const;
const UNAVAILABLE = 14;

type Key = { publicKey: string; privateKey: string };

/** Every sealed value of every table: [table, kek id]. */
async function sealedValues(inst: Instance): Promise<{ table: string; kekId: string }[]> {
  const store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined });
  try {
    const out: { table: string; kekId: string }[] = [];
    for (const t of await store.db.introspection.getTables()) {
      const rows = await store.db
        .selectFrom(t.name as never)
        .selectAll()
        .execute();
      for (const m of JSON.stringify(rows).matchAll(/sgl1\.([A-Za-z0-9_-]+)\./g)) out.push({ table: t.name, kekId: m[1]! });
    }
    return out;
  } finally {
    await store.close();
  }
}

let token: SoftToken;

const BIN = path.resolve(import.meta.dirname, "../../bin/sigil.mjs");
const runCli = (args: string[], env: NodeJS.ProcessEnv) =>
  promisify(execFile)(process.execPath, [BIN, ...args], { env, cwd: path.resolve(import.meta.dirname, "../..") });

before(async () => {
  token = await newSoftToken();
});
after(() => token?.cleanup());

describe("the token's key, in this process (SoftHSM2)", () => {
  const settings = () => ({
    library: SOFTHSM_LIBRARY,
    tokenLabel: token.tokenLabel,
    keyLabel: token.keyLabel,
    pin: token.pin,
    timeoutMs: 5_000,
  });

  it("seals and opens through the token, binds the wrapped data key to its row, and names the token's key", async () => {
    const kek = await Pkcs11Kek.open(settings());
    try {
      const master = new MasterKey(kek);
      const sealed = await master.seal("on the token", "row:1");
      assert.equal(MasterKey.kekIdOf(sealed), pkcs11KeyId(token.keyLabel, token.key.kcv, "gcm"));
      assert.equal((await master.open(sealed, "row:1")).toString(), "on the token");
      // The token refuses the data key under another row's AAD: a refusal, not an outage.
      const moved = await master.open(sealed, "row:2").then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(moved instanceof Error && !isKeyUnavailable(moved), `refused: ${String(moved)}`);
    } finally {
      await kek.close();
    }
  });

  it("AES-KW (SIGIL_PKCS11_MECHANISM=aes-kw) seals under its own id, and either id opens with the same key", async () => {
    const kw = await Pkcs11Kek.open({ ...settings(), mechanism: "aes-kw" });
    const gcm = await Pkcs11Kek.open(settings());
    try {
      assert.equal(kw.id, pkcs11KeyId(token.keyLabel, token.key.kcv, "kw"));
      assert.deepEqual([...kw.opens].sort(), [...gcm.opens].sort());
      const byKw = await new MasterKey(kw).seal("wrapped by KW", "row:5");
      const byGcm = await new MasterKey(gcm).seal("wrapped by GCM", "row:6");
      assert.equal(MasterKey.kekIdOf(byKw), kw.id);
      assert.equal((await new MasterKey(gcm).open(byKw, "row:5")).toString(), "wrapped by KW");
      assert.equal((await new MasterKey(kw).open(byGcm, "row:6")).toString(), "wrapped by GCM");
      // KW has no AAD: the body's binding refuses the value in another row.
      await assert.rejects(new MasterKey(kw).open(byKw, "row:7"));
    } finally {
      await kw.close();
      await gcm.close();
    }
  });

  it("a token that goes away fails calls with KeyUnavailableError; it serves again once back", async () => {
    const kek = await Pkcs11Kek.open(settings());
    const master = new MasterKey(kek);
    try {
      const sealed = await master.seal("x", "row:3");
      token.unplug();
      try {
        const away = await master.open(sealed, "row:3").then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(isKeyUnavailable(away), `unavailable: ${String(away)}`);
        const sealing = await master.seal("y", "row:4").then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(isKeyUnavailable(sealing), `unavailable: ${String(sealing)}`);
      } finally {
        token.plug();
      }
      const back = Date.now();
      for (;;) {
        try {
          assert.equal((await master.open(sealed, "row:3")).toString(), "x");
          break;
        } catch (err) {
          assert.ok(isKeyUnavailable(err) && Date.now() - back < 5_000, String(err));
        }
      }
    } finally {
      await kek.close();
    }
  });

  it("refuses a wrong PIN and an absent key at opening, naming the problem", async () => {
    await assert.rejects(Pkcs11Kek.open({ ...settings(), pin: "0000" }), /refused the PIN/);
    await assert.rejects(Pkcs11Kek.open({ ...settings(), keyLabel: "no-such-key" }), /no AES key labelled "no-such-key"/);
  });
});

for (const engine of engines()) {
  describe(`master key on a PKCS#11 token (SoftHSM2, ${engine.name})`, { skip: engine.skip, timeout: 240_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    let signer: string;
    let tokenKeyIds: string[];
    const secrets: Secret[] = [];

    const apiClient = (key: Key, organizationId = init.organizationId) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: organizationId,
      }).apiClient();
    const root = () => apiClient({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });

    before(async () => {
      inst = await newInstance(engine.name, { LOG_LEVEL: "debug", ...token.env });
      delete inst.env.SIGIL_MASTER_KEY;
      init = await sigilInit(inst, ["--name", "Custody Org"]);
      server = await startServer(inst);
      const doc = (await (await fetch(`${server.url}/public/v1/discovery/keys`)).json()) as {
        keys: { purpose: string; publicKey: string; status: string }[];
      };
      signer = doc.keys.find((k) => k.purpose === "BUNDLE_SIGNER" && k.status === "active")!.publicKey;
      tokenKeyIds = [pkcs11KeyId(token.keyLabel, token.key.kcv, "gcm"), pkcs11KeyId(token.keyLabel, token.key.kcv, "kw")];
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("the key on the token cannot leave it", () => {
      assert.deepEqual([token.key.valueLen, token.key.extractable, token.key.sensitive], [32, false, true]);
      assert.ok(token.key.gcm, "SoftHSM2 offers AES-GCM");
    });

    it("sign-up, wallets, private keys, signing and export work, with no key-encryption key in the environment or the data directory", async () => {
      const c = root();
      // Sign-up: a sub-organization with its wallet.
      const sub = await c.createSubOrganization({
        subOrganizationName: `signup-${randomBytes(3).toString("hex")}`,
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "u", apiKeys: [], authenticators: [], oauthProviders: [] }],
        wallet: { walletName: "main", accounts: [ETH0] },
      });
      assert.equal(sub.wallet?.addresses.length, 1);

      // A wallet: signing with its account, verified against the account's public key.
      const made = await c.createWallet({ walletName: "on the token", accounts: [ETH0] });
      const account = (await c.getWalletAccounts({ walletId: made.walletId })).accounts[0]!;
      const digest = randomBytes(32);
      const sig = await c.signRawPayload({
        signWith: made.addresses[0]!,
        payload: digest.toString("hex"),
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NO_OP",
      });
      const compact = Buffer.from(sig.r.padStart(64, "0") + sig.s.padStart(64, "0"), "hex");
      assert.ok(
        secp256k1.verify(compact, digest, Buffer.from(account.publicKey!, "hex"), { prehash: false }),
        "the wallet account's signature verifies",
      );

      // A private key: opened through the token on every signature.
      const pk = (
        await c.createPrivateKeys({
          privateKeys: [{ privateKeyName: "pk", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: [] }],
        })
      ).privateKeys[0]!;
      const pkPublic = (await c.getPrivateKey({ privateKeyId: pk.privateKeyId! })).privateKey.publicKey;
      const sig2 = await c.signRawPayload({
        signWith: pk.privateKeyId!,
        payload: digest.toString("hex"),
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NO_OP",
      });
      assert.ok(
        secp256k1.verify(Buffer.from(sig2.r.padStart(64, "0") + sig2.s.padStart(64, "0"), "hex"), digest, Buffer.from(pkPublic, "hex"), {
          prehash: false,
        }),
      );

      // Export: the bundle opens to the mnemonic that derives the wallet's address.
      const target = generateP256KeyPair();
      const exported = await c.exportWallet({ walletId: made.walletId, targetPublicKey: target.publicKeyUncompressed });
      const mnemonic = await decryptExportBundle({
        exportBundle: exported.exportBundle,
        embeddedKey: target.privateKey,
        organizationId: init.organizationId,
        returnMnemonic: true,
        dangerouslyOverrideSignerPublicKey: signer,
      });
      assert.equal(addressOf(deriveKey(seedOf(mnemonic), "CURVE_SECP256K1", ETH0.path), "ADDRESS_FORMAT_ETHEREUM"), made.addresses[0]);
      secrets.push(
        { what: "mnemonic", needle: mnemonic },
        { what: "mnemonic's first words", needle: mnemonic.split(" ").slice(0, 3).join(" ") },
      );

      // No key-encryption key outside the token: no master.key, no SIGIL_MASTER_KEY given to the server.
      assert.ok(!existsSync(path.join(inst.dataDir, "master.key")), "no master.key in the data directory");
      assert.deepEqual(
        readdirSync(inst.dataDir).filter((f) => /key/i.test(f)),
        [],
      );
      assert.equal(inst.env.SIGIL_MASTER_KEY, undefined);
      assert.equal(server.proc.spawnargs.join(" ").includes(token.pin), false, "the PIN is not on the command line");
      assert.ok(!server.output().includes(token.pin), "the PIN is not in the log");
      await assertSecretsNowhere(engine.name, inst, server.output(), secrets, "wallets");

      // Every sealed value, in every table, names the token's key.
      const sealed = await sealedValues(inst);
      const tables = new Set(sealed.map((s) => s.table));
      for (const t of ["wallets", "private_keys", "service_keys", "sigil_meta"]) assert.ok(tables.has(t), `${t} holds sealed values`);
      const foreign = sealed.filter((s) => !tokenKeyIds.includes(s.kekId));
      assert.deepEqual(foreign, [], "every sealed value names the token's key");
    });

    it("every sealed value, found through SEALED_KINDS, names the token's key and opens only in its own row", async () => {
      const kek = await Pkcs11Kek.open({
        library: SOFTHSM_LIBRARY,
        tokenLabel: token.tokenLabel,
        keyLabel: token.keyLabel,
        pin: token.pin,
        timeoutMs: 10_000,
      });
      const master = new MasterKey(kek);
      const store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined });
      try {
        const found = new Map<string, { kind: string; aad: string }[]>();
        for (const kind of SEALED_KINDS) {
          let q = store.db.selectFrom(kind.table as never).selectAll();
          if (kind.where) q = q.where(kind.where.column as never, "=", kind.where.value as never);
          for (const row of (await q.execute()) as Record<string, unknown>[]) {
            for (const v of kind.values(row)) {
              const list = found.get(kind.name) ?? [];
              list.push({ kind: kind.name, aad: v.aad });
              found.set(kind.name, list);
              assert.ok(tokenKeyIds.includes(MasterKey.kekIdOf(v.sealed)!), `${kind.name}: names the token's key`);
              await master.open(v.sealed, v.aad);
              // In another row (its id changed) it does not open.
              await assert.rejects(master.open(v.sealed, `${v.aad}x`), `${kind.name}: opens only in its own row`);
            }
          }
        }
        for (const name of ["wallet mnemonic", "private key", "service key", "master key canary", "root secret"])
          assert.ok(found.has(name), `${name}s are stored`);
        // Nothing sealed is stored anywhere SEALED_KINDS does not know.
        const total = [...found.values()].reduce((n, l) => n + l.length, 0);
        assert.equal(total, (await sealedValues(inst)).length, "SEALED_KINDS finds every sealed value in the database");
      } finally {
        await store.close();
        await kek.close();
      }
    });

    it("the token unplugged: what needs a secret answers 503 and records nothing, queries answer; back within 5 s of its return", async (t) => {
      const c = root();
      const pk = (
        await c.createPrivateKeys({
          privateKeys: [{ privateKeyName: "pk2", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: [] }],
        })
      ).privateKeys[0]!;
      const activitiesBefore = (await c.getActivities({ paginationOptions: { limit: "100" } })).activities.length;
      const sign = () =>
        c.signRawPayload({
          signWith: pk.privateKeyId!,
          payload: "ab".repeat(32),
          encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
          hashFunction: "HASH_FUNCTION_NO_OP",
        });
      token.unplug();
      let plugged = false;
      try {
        const signing = await rejection(sign());
        assert.equal(signing.code, UNAVAILABLE, `signing: ${signing.message}`);
        const creating = await rejection(c.createWallet({ walletName: "while away", accounts: [ETH0] }));
        assert.equal(creating.code, UNAVAILABLE, `create wallet: ${creating.message}`);
        // Queries need no secret.
        assert.ok((await c.getWallets()).wallets.length >= 1);
        assert.equal((await c.getWhoami()).organizationId, init.organizationId);
        assert.equal(
          (await c.getActivities({ paginationOptions: { limit: "100" } })).activities.length,
          activitiesBefore,
          "nothing recorded",
        );
        token.plug();
        plugged = true;
        const back = Date.now();
        let recovered: number | undefined;
        while (Date.now() - back < 5_000) {
          try {
            await sign();
            recovered = Date.now() - back;
            break;
          } catch (err) {
            assert.equal((err as { code?: number }).code, UNAVAILABLE, (err as Error).message);
          }
        }
        assert.ok(recovered !== undefined, "signing works again within 5 s of the token's return");
        t.diagnostic(`signing answered again ${recovered} ms after the token's return`);
        await c.createWallet({ walletName: "after the return", accounts: [ETH0] });
        assert.match(server.output(), /key store unavailable/);
      } finally {
        if (!plugged) token.plug();
      }
    });

    it("env → pkcs11 while serving: sigil master-key rotate (killed -9 half way, run again) re-wraps every value under the token's key, signers see no failure, then the old key goes", async (t) => {
      const old = await newInstance(engine.name);
      let srv: RunningServer | undefined;
      try {
        const first = await sigilInit(old, ["--name", "Rotating Org"]);
        srv = await startServer(old);
        const client = () =>
          new Turnkey({
            apiBaseUrl: srv!.url,
            apiPublicKey: first.apiPublicKey,
            apiPrivateKey: first.apiPrivateKey,
            defaultOrganizationId: first.organizationId,
          }).apiClient();
        const wallets = await Promise.all([0, 1, 2].map((i) => client().createWallet({ walletName: `before ${i}`, accounts: [ETH0] })));
        const pk = (
          await client().createPrivateKeys({
            privateKeys: [{ privateKeyName: "before", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: [] }],
          })
        ).privateKeys[0]!;
        await srv.stop();

        // The token's key seals; the key held in memory so far still opens.
        const previous = old.env.SIGIL_MASTER_KEY!;
        delete old.env.SIGIL_MASTER_KEY;
        Object.assign(old.env, token.env, { SIGIL_MASTER_KEY_PREVIOUS: previous });
        srv = await startServer(old);
        const signWith = [pk.privateKeyId!, ...wallets.map((w) => w.addresses[0]!)];
        let signed = 0;
        const failures: string[] = [];
        let stop = false;
        const signer = async (i: number) => {
          while (!stop) {
            try {
              await client().signRawPayload({
                signWith: signWith[i % signWith.length]!,
                payload: randomBytes(32).toString("hex"),
                encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
                hashFunction: "HASH_FUNCTION_NO_OP",
              });
              signed++;
            } catch (err) {
              failures.push((err as Error).message);
            }
          }
        };
        const signers = Array.from({ length: 32 }, (_, i) => signer(i));
        // A first run killed (SIGKILL) after its first batch of one row was written…
        const killed = spawn(process.execPath, [BIN, "master-key", "rotate", "--batch-rows", "1"], {
          env: old.env,
          stdio: ["ignore", "ignore", "pipe"],
        });
        await new Promise<void>((resolve) => {
          let err = "";
          killed.stderr!.on("data", (c: Buffer) => {
            err += c.toString();
            if (/"rows":[1-9]/.test(err)) killed.kill("SIGKILL");
          });
          killed.once("exit", () => resolve());
        });
        const leftAfterKill = (await sealedValues(old)).filter((v) => !tokenKeyIds.includes(v.kekId)).length;
        t.diagnostic(`after the kill -9: ${leftAfterKill} values still on the previous key`);
        // …then a second run finishes.
        const { stdout } = await runCli(["master-key", "rotate"], old.env);
        stop = true;
        await Promise.all(signers);
        const report = JSON.parse(stdout) as { rewrapped: number; remaining: number; done: boolean; keyId: string };
        t.diagnostic(`rotate: ${JSON.stringify(report)}; ${signed} signatures during it, ${failures.length} failed`);
        assert.deepEqual(failures, []);
        assert.ok(signed > 0);
        assert.equal(report.done, true);
        assert.equal(report.remaining, 0);
        assert.ok(report.rewrapped >= leftAfterKill, `${report.rewrapped} re-wrapped`);
        const after = await sealedValues(old);
        assert.deepEqual(
          after.filter((v) => !tokenKeyIds.includes(v.kekId)),
          [],
          "nothing left on the previous key",
        );
        await srv.stop();

        // The previous key gone: everything still opens.
        delete old.env.SIGIL_MASTER_KEY_PREVIOUS;
        srv = await startServer(old);
        for (const w of signWith) {
          await client().signRawPayload({
            signWith: w,
            payload: randomBytes(32).toString("hex"),
            encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
            hashFunction: "HASH_FUNCTION_NO_OP",
          });
        }
        const target = generateP256KeyPair();
        assert.ok(
          (await client().exportWallet({ walletId: wallets[0]!.walletId, targetPublicKey: target.publicKeyUncompressed })).exportBundle,
        );
      } finally {
        await srv?.stop();
        await old.cleanup();
      }
    });

    it("without the token, the same data directory and database open nothing", async () => {
      await server.stop();
      // The token absent: the service does not start.
      token.unplug();
      try {
        const away = await rejection(startServer(inst));
        // SoftHSM2 with its token directory gone answers CKR_GENERAL_ERROR to the first call.
        assert.match(away.message, /the token is unavailable|no PKCS#11 token labelled/);
        // Any key held in memory (a guessed SIGIL_MASTER_KEY, a master.key) is refused at the canary…
        const guessed = await rejection(
          startServer(inst, [], { env: { SIGIL_MASTER_KEY_SOURCE: "env", SIGIL_MASTER_KEY: randomBytes(32).toString("hex") } }),
        );
        assert.match(guessed.message, /does not match/);
        // …and opens no sealed value of any table.
        const store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined });
        const guess = MasterKey.generate();
        let tried = 0;
        try {
          for (const t of await store.db.introspection.getTables()) {
            const rows = await store.db
              .selectFrom(t.name as never)
              .selectAll()
              .execute();
            for (const m of JSON.stringify(rows).matchAll(/sgl1\.[A-Za-z0-9_.-]+/g)) {
              tried++;
              await assert.rejects(guess.open(m[0], "any"), /another master key/);
            }
          }
        } finally {
          await store.close();
        }
        assert.ok(tried > 5, `${tried} sealed values tried`);
      } finally {
        token.plug();
      }
      server = await startServer(inst);
      assert.ok((await root().getWallets()).wallets.length >= 1, "with the token back, the service opens again");
    });
  });
}

for (const engine of engines()) {
  describe(`the auth proxy with the master key on the token (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let stack: ProxyStack;
    before(async () => {
      stack = await startProxyStack(engine, { ...token.env, SIGIL_MASTER_KEY: "" });
    });
    after(async () => {
      await stack?.stop();
    });

    it("OTP through the proxy (target key and code digest under the token), sign-up and login", async () => {
      const email = `custody-${randomBytes(3).toString("hex")}@example.com`;
      const verified = await stack.verifiedEmail(email);
      const user = await stack.signUpWithOtp(verified, email);
      assert.match(user.organizationId, /^[0-9a-f-]{36}$/);
      const login = await stack.otpLogin(verified);
      assert.equal(login.status, 200, JSON.stringify(login.json));
      assert.equal(login.claims?.organization_id, user.organizationId);
    });
  });
}
