// Secrets of the login flows never reach the store or the logs in a readable form: after a
// full OTP flow (a wrong attempt, and a verify_otp V1 with its code in plain: a secret
// parameter, docs/activities.md §10) against a child-process server logging at trace level,
// the SQLite files (database, WAL) — or a text dump of every table of the instance's
// PostgreSQL database — and the server's output are searched for the OTP code, the session
// and token private keys, the per-OTP HPKE private keys and every service private key
// (opened with the instance's master key, in every encoding a careless log would use).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { Turnkey } from "@turnkey/sdk-server";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { encryptOtpCodeToBundle } from "@turnkey/crypto";
import { engines, newInstance, sigilInit, startServer, type Instance, type RunningServer } from "../helpers/server.ts";
import { SmtpSink, discoveredKeys, e2eOtpLogin, type E2eLogin } from "../helpers/smtp-sink.ts";
import { MasterKey } from "../../src/crypto/envelope.ts";
import { generateP256, p256FromPkcs8, privateScalar, toPkcs8 } from "../../src/crypto/p256.ts";

const EMAIL = "secret.keeper@example.com";

interface SealedRows {
  serviceKeys: { id: string; purpose: string; private_key_sealed: string }[];
  otps: { id: string; target_private_key_sealed: string }[];
}

/** Every way a P-256 private key could be written out: scalar hex, PKCS#8 DER hex/base64/base64url. */
function encodings(der: Buffer): string[] {
  const key = p256FromPkcs8(der);
  const scalar = privateScalar(key);
  const pkcs8 = toPkcs8(key);
  return [
    scalar.toString("hex"),
    scalar.toString("hex").toUpperCase(),
    scalar.toString("base64"),
    scalar.toString("base64url"),
    pkcs8.toString("hex"),
    pkcs8.toString("base64"),
    pkcs8.toString("base64url"),
  ];
}

for (const spec of engines()) {
  describe(`login secrets stay secret [${spec.name}]`, { skip: spec.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let logins: E2eLogin[] = [];
    let wrongCodeSent = "";
    let unusedCode = "";
    let plainCode = "";

    before(async () => {
      sink = await SmtpSink.start();
      inst = await newInstance(spec.name, { SMTP_URL: sink.url, LOG_LEVEL: "trace" });
      const init = await sigilInit(inst);
      server = await startServer(inst);
      const parent = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
      const sub = await parent.createSubOrganization({
        subOrganizationName: "secrets",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "keeper", userEmail: EMAIL, apiKeys: [], authenticators: [], oauthProviders: [] }],
      });
      logins = [
        await e2eOtpLogin(parent, sink, server.url, sub.subOrganizationId, EMAIL),
        await e2eOtpLogin(parent, sink, server.url, sub.subOrganizationId, EMAIL, { expirationSeconds: "60" }),
      ];
      // A wrong attempt too (its failure is logged and recorded).
      const mark = sink.mark();
      const started = await parent.initOtp({
        organizationId: sub.subOrganizationId,
        otpType: "OTP_TYPE_EMAIL",
        contact: EMAIL,
        appName: "Secrets",
      });
      const mail = await sink.nextMail(EMAIL, mark);
      const code = /^([0-9A-Z]{9})\r?$/m.exec(mail.text)![1]!;
      wrongCodeSent = (code[0] === "A" ? "B" : "A") + code.slice(1);
      unusedCode = code;
      const bundle = await encryptOtpCodeToBundle(
        wrongCodeSent,
        started.otpEncryptionTargetBundle,
        generateP256().publicCompressed,
        (await discoveredKeys(server.url)).otp,
      );
      await assert.rejects(
        parent.verifyOtp({ organizationId: sub.subOrganizationId, otpId: started.otpId, encryptedOtpBundle: bundle }),
        /Invalid OTP code/,
      );
      // verify_otp V1 (the SDKs send V2 only): the code in plain, stamped by the parent's key.
      const mark1 = sink.mark();
      const plain = await parent.initOtp({
        organizationId: sub.subOrganizationId,
        otpType: "OTP_TYPE_EMAIL",
        contact: EMAIL,
        appName: "Secrets",
      });
      plainCode = /^([0-9A-Z]{9})\r?$/m.exec((await sink.nextMail(EMAIL, mark1)).text)![1]!;
      const body = JSON.stringify({
        type: "ACTIVITY_TYPE_VERIFY_OTP",
        timestampMs: String(Date.now()),
        organizationId: sub.subOrganizationId,
        parameters: { otpId: plain.otpId, otpCode: plainCode, publicKey: generateP256().publicCompressed },
      });
      const stamp = await new ApiKeyStamper({ apiPublicKey: init.apiPublicKey, apiPrivateKey: init.apiPrivateKey }).stamp(body);
      const res = await fetch(`${server.url}/public/v1/submit/verify_otp`, {
        method: "POST",
        headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
        body,
      });
      const answer = (await res.json()) as { activity?: { status: string; intent: { verifyOtpIntent: { otpCode: string } } } };
      assert.equal(answer.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(answer));
      assert.equal(answer.activity.intent.verifyOtpIntent.otpCode, "<redacted>");
      await server.stop();
    });
    after(async () => {
      await server?.stop();
      await sink?.stop();
      await inst?.cleanup();
    });

    it("neither the store nor the logs contain a code, a session or token private key, an OTP target key or a service private key", async () => {
      const master = MasterKey.parse(inst.env.SIGIL_MASTER_KEY!);
      let stored: string;
      let sealed: SealedRows;
      if (spec.name === "sqlite") {
        const file = path.join(inst.dataDir, "sigil.db");
        const db = new Database(file, { readonly: true });
        sealed = {
          serviceKeys: db.prepare("SELECT id, purpose, private_key_sealed FROM service_keys").all() as SealedRows["serviceKeys"],
          otps: db.prepare("SELECT id, target_private_key_sealed FROM otps").all() as SealedRows["otps"],
        };
        db.close();
        // Every file of the database (main file, WAL, shared memory), as bytes read as text.
        stored = readdirSync(inst.dataDir)
          .filter((f) => f.startsWith("sigil.db"))
          .map((f) => readFileSync(path.join(inst.dataDir, f)).toString("latin1"))
          .join("\n");
      } else {
        const c = new pg.Client({ connectionString: inst.env.DATABASE_URL });
        await c.connect();
        try {
          const tables = (
            await c.query<{ schemaname: string; tablename: string }>(
              "SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
            )
          ).rows;
          assert.ok(
            tables.some((t) => t.tablename === "otps"),
            JSON.stringify(tables),
          );
          const dumps: string[] = [];
          for (const t of tables) {
            const rows = await c.query<{ j: string }>(`SELECT row_to_json(x)::text AS j FROM "${t.schemaname}"."${t.tablename}" x`);
            dumps.push(`${t.tablename}: ${rows.rows.map((r) => r.j).join("\n")}`);
          }
          stored = dumps.join("\n");
          sealed = {
            serviceKeys: (await c.query("SELECT id, purpose, private_key_sealed FROM service_keys")).rows,
            otps: (await c.query("SELECT id, target_private_key_sealed FROM otps")).rows,
          };
        } finally {
          await c.end();
        }
      }
      const logs = server.output();
      // LOG_LEVEL=trace: whatever the service logs at any level is in `logs` (every request was).
      assert.ok(logs.includes("incoming request") && logs.includes("/public/v1/submit/verify_otp"), "the server's log covers the flow");
      assert.equal(sealed.serviceKeys.length >= 3, true, "the three service keys exist");
      assert.equal(sealed.otps.length, 4, "four OTPs were initiated");
      assert.ok(stored.includes(sealed.otps[0]!.id), "the dump holds the rows");

      const needles: [string, string][] = [];
      const add = (what: string, needle: string) => needles.push([what, needle]);
      for (const l of logins) {
        add(`OTP code ${l.code}`, l.code);
        for (const e of [l.sessionKey.privateKey, l.sessionKey.privateKey.toUpperCase()]) add(`session private key (${e.slice(0, 6)}…)`, e);
        for (const e of encodings(toPkcs8(l.tokenKey))) add(`token private key (${e.slice(0, 6)}…)`, e);
      }
      add("wrong code", wrongCodeSent);
      add("code of the OTP never verified", unusedCode);
      add("code sent in plain to verify_otp V1", plainCode);
      add("master key", master.toHex());
      for (const k of sealed.serviceKeys) {
        for (const e of encodings(await master.open(k.private_key_sealed, `service-key:${k.purpose}:${k.id}`)))
          add(`${k.purpose} service private key (${e.slice(0, 6)}…)`, e);
      }
      for (const o of sealed.otps) {
        for (const e of encodings(await master.open(o.target_private_key_sealed, `otp-target:${o.id}`)))
          add(`OTP ${o.id} target private key (${e.slice(0, 6)}…)`, e);
      }
      // 3 service keys and 4 OTP target keys × 7 encodings, 2 token keys × 7, codes, sessions, master key.
      assert.ok(needles.length >= 6 * 7 + 2 * 7 + 4 + 4 + 1, `${needles.length} needles`);
      const found: string[] = [];
      for (const [what, needle] of needles) {
        assert.ok(needle.length >= 6, what);
        if (stored.includes(needle)) found.push(`store: ${what}`);
        if (logs.includes(needle)) found.push(`logs: ${what}`);
      }
      assert.deepEqual(found, []);
      // The mails themselves did carry the codes (the search above would have found them had they leaked).
      for (const code of [...logins.map((l) => l.code), unusedCode, plainCode]) assert.ok(sink.mails.some((m) => m.text.includes(code)));
    });
  });
}
