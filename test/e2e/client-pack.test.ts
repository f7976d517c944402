// The workspace packages as an app installs them (lib/client/README.md "Install size"): each is
// `npm pack`ed into a temporary folder, the tarball installed into a fresh project (npm install,
// the registry asked only for what the npm cache lacks), and imported there by a plain Node
// process. Prints the install size and dependency count; checks that the tarball holds what the
// exports name and nothing of the repository's own (type checks, tests), that the client
// installs without its optional peer @turnkey/crypto, and that with the app's @turnkey/crypto the
// alias module and the esbuild plugin work from node_modules.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync, readFileSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import {
  CLIENT_DIR,
  WEBHOOKS_DIR,
  installPackedClient,
  measureInstalled,
  npmInstallTarball,
  npmPack,
  removeDir,
} from "../helpers/packed-client.ts";

const run = promisify(execFile);
const ROOT_PKG = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../package.json"), "utf8")) as {
  devDependencies: Record<string, string>;
};

/** A fresh project folder: package.json only. */
function project(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "sigil-app-"));
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  return dir;
}
/** Runs `code` as an ES module in `dir` (imports resolve from dir/node_modules); its stdout. */
async function nodeIn(dir: string, code: string): Promise<string> {
  const file = path.join(dir, `probe-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code);
  const { stdout } = await run(process.execPath, [file], { cwd: dir });
  return stdout.trim();
}
/** The files of a tarball, without the leading "package/". */
async function tarList(tarball: string): Promise<string[]> {
  const { stdout } = await run("tar", ["-tzf", tarball]);
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ""))
    .sort();
}
const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

describe("npm pack of the workspace packages, installed into a fresh project", () => {
  const dirs: string[] = [];
  let packDir: string;
  before(() => {
    packDir = mkdtempSync(path.join(os.tmpdir(), "sigil-pack-"));
    dirs.push(packDir);
  });
  after(() => {
    for (const d of dirs) removeDir(d);
  });

  it("@sigil/client: the tarball, installed alone (4 dependencies at most), imported by Node", async (t) => {
    const tarball = await npmPack(CLIENT_DIR, packDir);
    const files = await tarList(tarball);
    for (const f of [
      "package.json",
      "README.md",
      "client.mjs",
      "client.d.mts",
      "turnkey-crypto.mjs",
      "turnkey-crypto.d.mts",
      "esbuild.mjs",
      "esbuild.d.mts",
      "src/index.mjs",
      "src/discovery.mjs",
    ]) {
      assert.ok(files.includes(f), `${f} in ${files.join(", ")}`);
    }
    assert.deepEqual(
      files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.mts")),
      [],
      "no type-check files",
    );

    const app = project();
    dirs.push(app);
    const installed = await installPackedClient(app);
    t.diagnostic(
      `@sigil/client: tarball ${kb(statSync(installed.tarball).size)}, installed ${kb(installed.sizeBytes)} with ${installed.dependencyCount} dependencies`,
    );
    assert.ok(existsSync(path.join(app, "node_modules/@sigil/client/package.json")));
    assert.ok(installed.dependencyCount >= 3 && installed.dependencyCount <= 4, `dependencies: ${installed.dependencyCount}`);
    assert.ok(installed.sizeBytes > 0 && installed.sizeBytes < 8 * 1024 * 1024, `size ${installed.sizeBytes}`);
    assert.ok(!existsSync(path.join(app, "node_modules/@turnkey/crypto")), "the optional peer is not installed for the app");
    assert.deepEqual(
      JSON.parse(readFileSync(path.join(app, "package.json"), "utf8")),
      { name: "app", private: true, type: "module" },
      "package.json left as it was",
    );

    const names = (await nodeIn(app, `const m = await import("@sigil/client"); console.log(Object.keys(m).sort().join(","));`)).split(",");
    for (const n of [
      "createSigilClient",
      "verifyOtpWithProxy",
      "encryptOtpCode",
      "decryptExportBundle",
      "encryptWalletToBundle",
      "fetchServiceKeys",
    ])
      assert.ok(names.includes(n), `${n} in ${names.join(",")}`);
    assert.equal(
      await nodeIn(app, `const m = await import("@sigil/client/esbuild"); console.log(m.sigilTurnkeyCrypto().name);`),
      "sigil-turnkey-crypto",
    );
    // Deep paths are not exported.
    await assert.rejects(nodeIn(app, `await import("@sigil/client/src/otp.mjs");`), /ERR_PACKAGE_PATH_NOT_EXPORTED/);
  });

  it("@sigil/client/turnkey-crypto with the app's @turnkey/crypto: every name, and the esbuild plugin from node_modules", async (t) => {
    const app = project();
    dirs.push(app);
    const tarball = await npmPack(CLIENT_DIR, mkdtempSync(path.join(packDir, "c-")));
    await npmInstallTarball(tarball, app, [`@turnkey/crypto@${ROOT_PKG.devDependencies["@turnkey/crypto"]}`]);
    const withPeer = measureInstalled(app, "@turnkey/crypto");
    t.diagnostic(
      `the peer @turnkey/crypto adds ${kb(withPeer.sizeBytes)} with ${withPeer.dependencyCount} dependencies (the app's, not the client's)`,
    );
    const out = JSON.parse(
      await nodeIn(
        app,
        `const real = await import("@turnkey/crypto"); const alias = await import("@sigil/client/turnkey-crypto");
         console.log(JSON.stringify({ missing: Object.keys(real).filter((k) => !(k in alias)), wrapped: Object.keys(real).filter((k) => real[k] !== alias[k]), configure: typeof alias.configureSigil }));`,
      ),
    ) as { missing: string[]; wrapped: string[]; configure: string };
    assert.deepEqual(out, { missing: [], wrapped: ["encryptOtpCodeToBundle"], configure: "function" });

    // The repository's esbuild (an app brings its own) with the installed plugin.
    const { build } = await import("esbuild");
    const { sigilTurnkeyCrypto } = (await import(
      path.join(app, "node_modules/@sigil/client/esbuild.mjs")
    )) as typeof import("@sigil/client/esbuild");
    const built = await build({
      stdin: {
        contents: `import { encryptOtpCodeToBundle } from "@turnkey/crypto"; console.log(typeof encryptOtpCodeToBundle);`,
        resolveDir: app,
        loader: "js",
      },
      bundle: true,
      write: false,
      metafile: true,
      platform: "browser",
      format: "esm",
      plugins: [sigilTurnkeyCrypto()],
      logLevel: "silent",
    });
    const inputs = Object.keys(built.metafile.inputs);
    const real = (p: string) => (path.isAbsolute(p) ? p : path.resolve(process.cwd(), p));
    assert.ok(
      inputs.some((p) => real(p).startsWith(path.join(app, "node_modules/@sigil/client/turnkey-crypto.mjs"))),
      inputs.join("\n"),
    );
    assert.ok(
      inputs.some((p) => real(p).startsWith(path.join(app, "node_modules/@turnkey/crypto/dist/"))),
      "the app's @turnkey/crypto is the one wrapped",
    );
  });

  it("@sigil/webhooks: no dependencies; the verifier and the test vectors import from the tarball", async (t) => {
    const tarball = await npmPack(WEBHOOKS_DIR, packDir);
    const files = await tarList(tarball);
    for (const f of [
      "package.json",
      "README.md",
      "webhooks.mjs",
      "webhooks.d.mts",
      "src/verifier.mjs",
      "test-vectors/webhook-signature-v1.json",
    ])
      assert.ok(files.includes(f), `${f} in ${files.join(", ")}`);
    assert.deepEqual(
      files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.mts")),
      [],
    );
    const app = project();
    dirs.push(app);
    await npmInstallTarball(tarball, app);
    const m = measureInstalled(app, "@sigil/webhooks");
    t.diagnostic(
      `@sigil/webhooks: tarball ${kb(statSync(tarball).size)}, installed ${kb(m.sizeBytes)} with ${m.dependencyCount} dependencies`,
    );
    assert.equal(m.dependencyCount, 0);
    const out = await nodeIn(
      app,
      `const w = await import("@sigil/webhooks"); const { readFileSync } = await import("node:fs"); const { fileURLToPath } = await import("node:url");
       const v = JSON.parse(readFileSync(fileURLToPath(import.meta.resolve("@sigil/webhooks/test-vectors/webhook-signature-v1.json")), "utf8"));
       console.log(typeof w.createWebhookVerifier, typeof w.verifyWebhookSignature, typeof v);`,
    );
    assert.equal(out, "function function object");
  });
});
