// The frames' files (docs/frames.md §5): export.html and import.html (pages/*.body.html under
// one head), frames.css, and one bundle per page (esbuild, from src/frames/browser), plus
// config.js — the API base URL and the allowed parent origins, the only configuration the pages
// read — and the response headers they must be served with. `sigil serve` builds them in memory
// once per process; `npm run build` writes them to dist/frames for any static server.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { onceRetrying } from "../cache/once.ts";
import { originOf } from "./origins.ts";

// src/frames here, dist/cli in the service bundle: both two levels below the root.
const ROOT = path.resolve(import.meta.dirname, "../..");
const PAGES = path.join(ROOT, "src/frames/pages");
const BROWSER = path.join(ROOT, "src/frames/browser");

export interface FramesSettings {
  /** The API (scheme://host[:port]) the frames read the BUNDLE_SIGNER keys from. */
  apiBaseUrl: string;
  /** Exact origins allowed to embed and drive the frames. */
  parentOrigins: string[];
}

export interface Asset {
  type: string;
  body: Buffer;
}

/** Checked settings: origins normalised, duplicates dropped. */
export function checkSettings(s: FramesSettings): FramesSettings {
  return {
    apiBaseUrl: originOf(s.apiBaseUrl, "the frames' API base URL"),
    parentOrigins: [...new Set(s.parentOrigins.map((o) => originOf(o, "a frames parent origin")))],
  };
}

/** config.js: what the pages read before their bundle runs. */
export function configScript(s: FramesSettings): string {
  return `// Sigil frames configuration (docs/frames.md §5).\nglobalThis.SIGIL_FRAMES_CONFIG = ${JSON.stringify({ apiBaseUrl: s.apiBaseUrl, parentOrigins: s.parentOrigins })};\n`;
}

/**
 * The pages' Content-Security-Policy: their own script and style only, connections to the API
 * only, nothing else loaded, framed only by the parent origins (none: by nobody).
 */
export function framesCsp(s: FramesSettings): string {
  const ancestors = s.parentOrigins.length > 0 ? s.parentOrigins.join(" ") : "'none'";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src ${s.apiBaseUrl}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join("; ");
}

/** The headers of every response of the frames' origin. */
export function framesHeaders(s: FramesSettings): Record<string, string> {
  return {
    "content-security-policy": framesCsp(s),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cache-control": "no-store",
  };
}

/** esbuild's options for a page's own script, shared with the console (docs/frames.md §5.1). */
export const BROWSER_BUNDLE = {
  bundle: true,
  write: false,
  platform: "browser",
  format: "iife",
  target: "es2022",
  minify: true,
  legalComments: "none",
  logLevel: "silent",
} as const;

/** The static files (all but config.js), built once per process (a failed build is tried again). */
export const frameAssets: () => Promise<Map<string, Asset>> = onceRetrying(buildAssets);

/**
 * A page: no inline script or style (the CSP allows none), config.js before the page's bundle,
 * both deferred so they run in order once the body is parsed.
 */
function pageHtml(title: string, script: string, body: string): string {
  const indented = body
    .trimEnd()
    .split("\n")
    .map((l) => (l ? `    ${l}` : l))
    .join("\n");
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="referrer" content="no-referrer" />
    <title>${title}</title>
    <link rel="stylesheet" href="frames.css" />
    <script src="config.js" defer></script>
    <script src="${script}" defer></script>
  </head>
  <body>
${indented}
  </body>
</html>
`;
}

async function buildAssets(): Promise<Map<string, Asset>> {
  const { build } = await import("esbuild");
  const out = await build({
    entryPoints: { export: path.join(BROWSER, "export.ts"), import: path.join(BROWSER, "import.ts") },
    outdir: "/frames-out",
    ...BROWSER_BUNDLE,
  });
  const files = new Map<string, Asset>();
  for (const f of out.outputFiles)
    files.set(`/${path.basename(f.path)}`, { type: "text/javascript; charset=utf-8", body: Buffer.from(f.contents) });
  for (const [name, title] of [
    ["export", "Export"],
    ["import", "Import"],
  ] as const) {
    files.set(`/${name}.html`, {
      type: "text/html; charset=utf-8",
      body: Buffer.from(pageHtml(title, `${name}.js`, readFileSync(path.join(PAGES, `${name}.body.html`), "utf8"))),
    });
  }
  files.set("/frames.css", { type: "text/css; charset=utf-8", body: readFileSync(path.join(PAGES, "frames.css")) });
  return files;
}

/**
 * `_headers` (the format of Netlify and Cloudflare Pages; docs/frames.md §5.2 gives nginx's):
 * the headers every file of the frames' origin is served with.
 */
export function headersFile(s: FramesSettings): string {
  const lines = ["/*"];
  for (const [name, value] of Object.entries(framesHeaders(s))) lines.push(`  ${name}: ${value}`);
  return `${lines.join("\n")}\n`;
}

/** Writes the frames to `outDir`; returns the file names written. */
export async function writeFrames(outDir: string, s: FramesSettings): Promise<string[]> {
  const settings = checkSettings(s);
  mkdirSync(outDir, { recursive: true });
  const names: string[] = [];
  for (const [name, asset] of await frameAssets()) {
    writeFileSync(path.join(outDir, name.slice(1)), asset.body);
    names.push(name.slice(1));
  }
  writeFileSync(path.join(outDir, "config.js"), configScript(settings));
  writeFileSync(path.join(outDir, "_headers"), headersFile(settings));
  return [...names, "config.js", "_headers"].sort();
}

/**
 * `npm run build`'s settings (docs/frames.md §5.2), from the same variables `sigil serve` reads:
 * SIGIL_FRAMES_API_URL (else http://127.0.0.1:<PORT or 8080>) and SIGIL_FRAMES_PARENT_ORIGINS
 * (else SIGIL_CORS_ORIGINS; else none — no page may embed the frames until config.js and
 * _headers name one).
 */
export function staticSettings(env: NodeJS.ProcessEnv): FramesSettings {
  const list = (v: string | undefined) =>
    (v ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  const parents = list(env.SIGIL_FRAMES_PARENT_ORIGINS);
  return checkSettings({
    apiBaseUrl: env.SIGIL_FRAMES_API_URL ?? `http://127.0.0.1:${env.PORT || "8080"}`,
    parentOrigins: parents.length > 0 ? parents : list(env.SIGIL_CORS_ORIGINS),
  });
}
