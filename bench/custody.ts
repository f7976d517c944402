// Stamped sign_raw_payload with the key-encryption key on a PKCS#11 token (SoftHSM2) next to
// the same with SIGIL_MASTER_KEY, in one run (docs/custody.md §6): two SQLite servers side by
// side, loaded in turn by N concurrent @turnkey/sdk-server clients (each request stamped), for a
// wallet account (its derived key cached after the first signature: no token call) and for a
// private key (opened through the token on every signature).
//
//   node --import tsx bench/custody.ts [--connections N] [--duration S] [--warmup S] [--rounds R]
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { Turnkey } from "@turnkey/sdk-server";
import {
  cleanupAll,
  newSigilInstance,
  sigilInit,
  startSigil,
  tempDir,
  type InitResult,
  type Running,
  type SigilInstance,
} from "./procs.ts";
import { num } from "./options.ts";

const CONNECTIONS = num("--connections", "BENCH_CONNECTIONS", 32, 1, 256);
const DURATION_S = num("--duration", "BENCH_DURATION", 8, 1, 60);
const WARMUP_S = num("--warmup", "BENCH_WARMUP", 2, 0, 30);
const ROUNDS = num("--rounds", "BENCH_ROUNDS", 2, 1, 10);
const LIBRARY = "/usr/lib/softhsm/libsofthsm2.so";
const run = promisify(execFile);

interface Target {
  name: string;
  inst: SigilInstance;
  server: Running;
  init: InitResult;
  wallet: string;
  privateKey: string;
}

const client = (t: Target) =>
  new Turnkey({
    apiBaseUrl: t.server.url,
    apiPublicKey: t.init.apiPublicKey,
    apiPrivateKey: t.init.apiPrivateKey,
    defaultOrganizationId: t.init.organizationId,
  }).apiClient();

async function softToken(): Promise<NodeJS.ProcessEnv> {
  const dir = tempDir("sigil-bench-softhsm-");
  const tokens = path.join(dir, "tokens");
  mkdirSync(tokens, { mode: 0o700 });
  const conf = path.join(dir, "softhsm2.conf");
  writeFileSync(conf, `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const pin = randomBytes(8).toString("hex");
  const pinFile = path.join(dir, "pin");
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
  await run(
    "softhsm2-util",
    ["--init-token", "--free", "--label", "sigil-bench", "--pin", pin, "--so-pin", randomBytes(8).toString("hex")],
    { env: { ...process.env, SOFTHSM2_CONF: conf } },
  );
  return {
    SOFTHSM2_CONF: conf,
    SIGIL_MASTER_KEY_SOURCE: "pkcs11",
    SIGIL_PKCS11_LIBRARY: LIBRARY,
    SIGIL_PKCS11_TOKEN_LABEL: "sigil-bench",
    SIGIL_PKCS11_PIN_FILE: pinFile,
  };
}

async function target(name: string, extra?: NodeJS.ProcessEnv): Promise<Target> {
  const inst = await newSigilInstance("sqlite");
  if (extra) {
    delete inst.env.SIGIL_MASTER_KEY;
    Object.assign(inst.env, extra);
    await run(process.execPath, [path.join(inst.root, "bin/sigil.mjs"), "master-key", "create-pkcs11"], { env: inst.env, cwd: inst.root });
  }
  const init = await sigilInit(inst, `custody bench ${name}`);
  const server = await startSigil(inst);
  const t: Target = { name, inst, server, init, wallet: "", privateKey: "" };
  const c = client(t);
  t.wallet = (
    await c.createWallet({
      walletName: "bench",
      accounts: [
        { curve: "CURVE_SECP256K1", pathFormat: "PATH_FORMAT_BIP32", path: "m/44'/60'/0'/0/0", addressFormat: "ADDRESS_FORMAT_ETHEREUM" },
      ],
    })
  ).addresses[0]!;
  t.privateKey = (
    await c.createPrivateKeys({
      privateKeys: [{ privateKeyName: "bench", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: [] }],
    })
  ).privateKeys[0]!.privateKeyId!;
  return t;
}

/** Signatures per second over `seconds` with CONNECTIONS clients in flight; failures counted. */
async function load(t: Target, signWith: string, seconds: number): Promise<{ rate: number; failed: number }> {
  const clients = Array.from({ length: CONNECTIONS }, () => client(t));
  let done = 0;
  let failed = 0;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < until) {
        try {
          await c.signRawPayload({
            signWith,
            payload: randomBytes(32).toString("hex"),
            encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
            hashFunction: "HASH_FUNCTION_NO_OP",
          });
          done++;
        } catch {
          failed++;
        }
      }
    }),
  );
  return { rate: done / ((performance.now() - t0) / 1000), failed };
}

async function main(): Promise<void> {
  const env = await target("env");
  const token = await target("pkcs11", await softToken());
  const rows: string[] = [];
  try {
    for (const kind of ["wallet account", "private key"] as const) {
      const rates: Record<string, number[]> = { env: [], pkcs11: [] };
      let failed = 0;
      for (let round = 0; round < ROUNDS; round++) {
        // Alternating, so both see the same machine.
        for (const t of round % 2 === 0 ? [env, token] : [token, env]) {
          const signWith = kind === "wallet account" ? t.wallet : t.privateKey;
          if (WARMUP_S) await load(t, signWith, WARMUP_S);
          const r = await load(t, signWith, DURATION_S);
          rates[t.name]!.push(r.rate);
          failed += r.failed;
        }
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const e = mean(rates.env!);
      const p = mean(rates.pkcs11!);
      rows.push(
        `${kind.padEnd(15)} env ${e.toFixed(1).padStart(7)}/s   pkcs11 ${p.toFixed(1).padStart(7)}/s   pkcs11/env ${((p / e) * 100).toFixed(0)} %   failed ${failed}`,
      );
    }
  } finally {
    for (const t of [env, token]) {
      await t.server.stop();
      await t.inst.cleanup();
    }
    await cleanupAll();
  }
  process.stdout.write(
    `stamped sign_raw_payload, ${CONNECTIONS} clients, ${DURATION_S} s × ${ROUNDS} rounds each (SQLite):\n${rows.join("\n")}\n`,
  );
}

await main();
