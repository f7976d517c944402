#!/usr/bin/env node
// Builds the app into dist/ with esbuild (examples/wallet-kit-app/README.md): src/main.tsx with
// React's automatic JSX runtime, the kit's styles.css as dist/app.css, index.html, and — when
// given — config.json. @turnkey/crypto is aliased to @sigil/client/turnkey-crypto by the
// client's esbuild plugin, so the kit's OTP modal encrypts codes to Sigil's published key.
//
//   node build.mjs [outDir]          (config.json: copy config.example.json into outDir and fill it in)
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * @param {object} [o]
 * @param {string} [o.outDir] where index.html, app.js and app.css go (default: dist/ here)
 * @param {object} [o.config] written as outDir/config.json when given
 * @param {string[]} [o.nodePaths] extra folders to resolve packages from (a client installed elsewhere)
 * @param {import("esbuild").Plugin[]} [o.plugins] instead of `sigilTurnkeyCrypto()` from @sigil/client/esbuild
 * @param {boolean} [o.minify] default true
 * @returns {Promise<{ outDir: string; metafile: import("esbuild").Metafile }>}
 */
export async function buildApp(o = {}) {
  const outDir = path.resolve(o.outDir ?? path.join(HERE, "dist"));
  const { build } = await import("esbuild");
  const plugins = o.plugins ?? [(await import("@sigil/client/esbuild")).sigilTurnkeyCrypto()];
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: { app: path.join(HERE, "src/main.tsx") },
    outdir: outDir,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    minify: o.minify ?? true,
    nodePaths: o.nodePaths ?? [],
    define: { "process.env.NODE_ENV": '"production"', global: "globalThis" },
    plugins,
    logLevel: "warning",
    metafile: true,
  });
  copyFileSync(path.join(HERE, "index.html"), path.join(outDir, "index.html"));
  if (o.config) writeFileSync(path.join(outDir, "config.json"), JSON.stringify(o.config, null, 2));
  return { outDir, metafile: result.metafile };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { outDir } = await buildApp({ outDir: process.argv[2] });
  console.log(`built ${path.relative(process.cwd(), outDir) || "."}: index.html, app.js, app.css (add config.json)`);
}
