// @sigil/client/turnkey-crypto, the drop-in @turnkey/crypto for core's verifyOtp
// (lib/client/README.md "Using the kit's OTP modal", docs/auth-proxy.md §7): its
// encryptOtpCodeToBundle, called with core's three arguments, passes each OTP_ENCRYPTION_TARGET
// key a real discovery endpoint (node:http on loopback) publishes to the real function; a bundle
// signed by any other key is refused, whatever key the bundle names; every other export is the
// real module's own. And the esbuild plugin puts the module in @turnkey/crypto's place in a
// bundle without the module importing itself.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as realCrypto from "@turnkey/crypto";
import * as alias from "@sigil/client/turnkey-crypto";
import { sigilTurnkeyCrypto } from "@sigil/client/esbuild";
import { generateP256, privateScalar, signP256, type P256Private } from "../../src/crypto/p256.ts";

const CONFIG = Symbol.for("@sigil/client/turnkey-crypto#config");

/** init_otp's bundle (docs/logins.md §3.3): data = hex(JSON{targetPublic}), DER signature over SHA-256(data bytes) by `signer`, naming `named`. */
function targetBundle(signer: P256Private, target: P256Private, named = signer.publicUncompressed): string {
  const data = Buffer.from(JSON.stringify({ targetPublic: target.publicUncompressed }), "utf8");
  return JSON.stringify({
    enclaveQuorumPublic: named,
    dataSignature: signP256(signer, data, "der").toString("hex"),
    data: data.toString("hex"),
  });
}

function decrypt(bundle: string, target: P256Private): unknown {
  const { encappedPublic, ciphertext } = JSON.parse(bundle) as { encappedPublic: string; ciphertext: string };
  const plain = realCrypto.hpkeDecrypt({
    ciphertextBuf: Buffer.from(ciphertext, "hex"),
    encappedKeyBuf: Buffer.from(encappedPublic, "hex"),
    receiverPriv: privateScalar(target).toString("hex"),
  });
  return JSON.parse(Buffer.from(plain).toString("utf8"));
}

/** A discovery endpoint publishing `published` as OTP_ENCRYPTION_TARGET keys (plus a key of another purpose); counts requests. */
class Discovery {
  published: string[] = [];
  other = generateP256().publicUncompressed;
  requests = 0;
  private server = http.createServer((req, res) => {
    this.requests++;
    if (req.url !== "/public/v1/discovery/keys") return void res.writeHead(404).end();
    const keys = [
      ...this.published.map((publicKey, i) => ({
        keyId: `otp-${i}`,
        purpose: "OTP_ENCRYPTION_TARGET",
        publicKey,
        createdAt: "1",
        status: i === 0 ? "active" : "published",
      })),
      { keyId: "bundle", purpose: "BUNDLE_SIGNER", publicKey: this.other, createdAt: "1", status: "active" },
    ];
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys }));
  });
  url = "";
  async start() {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  stop() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe("@sigil/client/turnkey-crypto", () => {
  const discovery = new Discovery();
  const active = generateP256();
  const previous = generateP256();
  const stranger = generateP256();
  const target = generateP256();
  const session = generateP256();
  before(() => discovery.start());
  after(() => discovery.stop());

  it("re-exports every name @turnkey/crypto exports, the same values, except encryptOtpCodeToBundle; adds configureSigil", () => {
    const names = Object.keys(realCrypto).sort();
    assert.ok(names.length > 30, `@turnkey/crypto's exports: ${names.join(", ")}`);
    const missing = names.filter((n) => !(n in alias));
    assert.deepEqual(missing, []);
    const differ = names.filter((n) => (alias as Record<string, unknown>)[n] !== (realCrypto as Record<string, unknown>)[n]);
    assert.deepEqual(differ, ["encryptOtpCodeToBundle"]);
    assert.deepEqual(
      Object.keys(alias).filter((n) => !names.includes(n)),
      ["configureSigil"],
    );
  });

  it("without configureSigil it trusts no key and says what to call", async () => {
    delete (globalThis as Record<symbol, unknown>)[CONFIG];
    await assert.rejects(
      alias.encryptOtpCodeToBundle("123456", targetBundle(active, target), session.publicCompressed),
      /configureSigil\(\{ apiBaseUrl \}\) has not been called/,
    );
    assert.throws(() => alias.configureSigil({ apiBaseUrl: "sigil.example.com" }), TypeError);
    assert.throws(() => alias.configureSigil(undefined as never), TypeError);
  });

  it("core's three-argument call: the bundle signed by the published key is encrypted to; the real function alone refuses it", async () => {
    discovery.published = [active.publicUncompressed];
    alias.configureSigil({ apiBaseUrl: `${discovery.url}/` });
    const bundle = targetBundle(active, target);
    await assert.rejects(
      realCrypto.encryptOtpCodeToBundle("123456", bundle, session.publicCompressed),
      /expected signer key 04[0-9a-f]+ does not match signer key from bundle/,
    );
    const out = await alias.encryptOtpCodeToBundle("123456", bundle, session.publicCompressed);
    assert.deepEqual(decrypt(out, target), { otp_code: "123456", public_key: session.publicCompressed });
  });

  it("tries each published key: a bundle signed by the pre-rotation key still works", async () => {
    discovery.published = [active.publicUncompressed, previous.publicUncompressed];
    alias.configureSigil({ apiBaseUrl: discovery.url });
    const out = await alias.encryptOtpCodeToBundle("654321", targetBundle(previous, target), session.publicCompressed);
    assert.deepEqual(decrypt(out, target), { otp_code: "654321", public_key: session.publicCompressed });
  });

  it("refuses a bundle signed by a key the deployment does not publish — naming itself, or naming a published key", async () => {
    discovery.published = [active.publicUncompressed];
    alias.configureSigil({ apiBaseUrl: discovery.url });
    const before = discovery.requests;
    // Self-named: the bundle's own enclaveQuorumPublic is never trusted.
    await assert.rejects(
      alias.encryptOtpCodeToBundle("123456", targetBundle(stranger, target), session.publicCompressed),
      /not signed by any of the 1 OTP_ENCRYPTION_TARGET key\(s\) the deployment publishes/,
    );
    // Naming the published key with another key's signature: the real function's signature check.
    await assert.rejects(
      alias.encryptOtpCodeToBundle("123456", targetBundle(stranger, target, active.publicUncompressed), session.publicCompressed),
      (err: Error) => /not signed by any/.test(err.message) && /signature verification failed/.test(String((err.cause as Error)?.message)),
    );
    // Also not a key of another purpose the deployment publishes.
    const bundleSignerKeyed = generateP256();
    discovery.other = bundleSignerKeyed.publicUncompressed;
    await assert.rejects(
      alias.encryptOtpCodeToBundle("123456", targetBundle(bundleSignerKeyed, target), session.publicCompressed),
      /not signed by any/,
    );
    // Each refusal looked once more for a rotation (one discovery request), no more.
    assert.ok(discovery.requests - before <= 4, `discovery requests: ${discovery.requests - before}`);
  });

  it("a rotation after the keys were cached: one more discovery request, then the new key", async () => {
    const next = generateP256();
    discovery.published = [active.publicUncompressed];
    alias.configureSigil({ apiBaseUrl: discovery.url });
    await alias.encryptOtpCodeToBundle("111111", targetBundle(active, target), session.publicCompressed);
    const cachedAt = discovery.requests;
    await alias.encryptOtpCodeToBundle("111111", targetBundle(active, target), session.publicCompressed);
    assert.equal(discovery.requests, cachedAt, "the cached keys serve the second call");
    discovery.published = [next.publicUncompressed, active.publicUncompressed];
    const out = await alias.encryptOtpCodeToBundle("222222", targetBundle(next, target), session.publicCompressed);
    assert.deepEqual(decrypt(out, target), { otp_code: "222222", public_key: session.publicCompressed });
    assert.equal(discovery.requests, cachedAt + 1);
  });

  it("a discovery failure is an error, not a fallback to the hosted key", async () => {
    alias.configureSigil({ apiBaseUrl: `${discovery.url}/nowhere` });
    await assert.rejects(alias.encryptOtpCodeToBundle("123456", targetBundle(active, target), session.publicCompressed), /HTTP 404/);
    discovery.published = [];
    alias.configureSigil({ apiBaseUrl: discovery.url });
    await assert.rejects(
      alias.encryptOtpCodeToBundle("123456", targetBundle(active, target), session.publicCompressed),
      /publishes no OTP_ENCRYPTION_TARGET key/,
    );
  });

  it("an explicit fourth argument goes to the real function unchanged", async () => {
    discovery.published = [active.publicUncompressed];
    alias.configureSigil({ apiBaseUrl: discovery.url });
    const out = await alias.encryptOtpCodeToBundle(
      "333333",
      targetBundle(stranger, target),
      session.publicCompressed,
      stranger.publicUncompressed,
    );
    assert.deepEqual(decrypt(out, target), { otp_code: "333333", public_key: session.publicCompressed });
    await assert.rejects(
      alias.encryptOtpCodeToBundle("333333", targetBundle(active, target), session.publicCompressed, stranger.publicUncompressed),
      /does not match signer key/,
    );
  });

  it("the esbuild plugin: every `@turnkey/crypto` import of a bundle gets the alias, which reaches the real module once", async () => {
    const { build } = await import("esbuild");
    const dir = mkdtempSync(path.join(os.tmpdir(), "sigil-alias-"));
    try {
      const out = await build({
        stdin: {
          contents: `export { encryptOtpCodeToBundle, configureSigil } from "@turnkey/crypto"; export { getPublicKey } from "@turnkey/crypto"; export { encryptOtpCodeToBundle as direct } from "@sigil/client/turnkey-crypto";`,
          resolveDir: path.resolve(import.meta.dirname, "../.."),
          loader: "js",
        },
        bundle: true,
        format: "esm",
        platform: "node",
        write: false,
        metafile: true,
        plugins: [sigilTurnkeyCrypto()],
        logLevel: "silent",
      });
      const inputs = Object.keys(out.metafile.inputs);
      assert.equal(inputs.filter((p) => p.endsWith("lib/client/turnkey-crypto.mjs")).length, 1, inputs.join("\n"));
      assert.ok(
        inputs.some((p) => /node_modules\/@turnkey\/crypto\/dist\/index\.mjs$/.test(p)),
        inputs.join("\n"),
      );
      const file = path.join(dir, "bundle.mjs");
      writeFileSync(file, out.outputFiles[0]!.text);
      const m = (await import(pathToFileURL(file).href)) as typeof alias & { direct: unknown };
      assert.equal(m.encryptOtpCodeToBundle, m.direct, "one module instance for the alias and the direct import");
      discovery.published = [active.publicUncompressed];
      m.configureSigil({ apiBaseUrl: discovery.url });
      const enc = await m.encryptOtpCodeToBundle("444444", targetBundle(active, target), session.publicCompressed);
      assert.deepEqual(decrypt(enc, target), { otp_code: "444444", public_key: session.publicCompressed });
      await assert.rejects(
        m.encryptOtpCodeToBundle("444444", targetBundle(stranger, target), session.publicCompressed),
        /not signed by any/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
