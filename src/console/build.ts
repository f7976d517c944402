// The operator console's files (docs/console.md §2): index.html (pages/index.body.html under one
// head), console.css, and one bundle (esbuild, from src/console/browser), plus the headers every
// console response carries (docs/console.md §3). `sigil serve` builds them in memory on the
// first request for /console (a server that never serves the console never pays the build);
// `npm run build` writes them to dist/console.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { onceRetrying } from "../cache/once.ts";
import { BROWSER_BUNDLE } from "../frames/build.ts";

// src/console here, dist/cli in the service bundle: both two levels below the root.
const ROOT = path.resolve(import.meta.dirname, "../..");
const PAGES = path.join(ROOT, "src/console/pages");
const BROWSER = path.join(ROOT, "src/console/browser");

export interface ConsoleAsset {
  type: string;
  body: Buffer;
  /** A strong validator: the console's files are not content-named, so browsers revalidate. */
  etag: string;
}

/**
 * The console's Content-Security-Policy (docs/console.md §3): its own script and style only (no
 * inline script or style), requests to its own origin only (the API is that origin), images
 * from itself or data: URLs, no base, no form posts, never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The headers of every console response, its 404s and redirects included. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "x-frame-options": "DENY",
  // Revalidated on every load (the ETag makes that a 304): a new server version is picked up at once.
  "cache-control": "no-cache",
});

/** The page: no inline script or style (the CSP allows none); the bundle deferred until the body is parsed. */
function pageHtml(body: string): string {
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
    <title>Sigil console</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="console.css" />
    <script src="console.js" defer></script>
  </head>
  <body>
${indented}
  </body>
</html>
`;
}

const asset = (type: string, body: Buffer): ConsoleAsset => ({
  type,
  body,
  etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
});

async function buildAssets(): Promise<Map<string, ConsoleAsset>> {
  const { build } = await import("esbuild");
  const out = await build({
    entryPoints: { console: path.join(BROWSER, "main.ts") },
    outdir: "/console-out",
    ...BROWSER_BUNDLE,
  });
  const files = new Map<string, ConsoleAsset>();
  for (const f of out.outputFiles) files.set(`/${path.basename(f.path)}`, asset("text/javascript; charset=utf-8", Buffer.from(f.contents)));
  files.set(
    "/index.html",
    asset("text/html; charset=utf-8", Buffer.from(pageHtml(readFileSync(path.join(PAGES, "index.body.html"), "utf8")))),
  );
  files.set("/console.css", asset("text/css; charset=utf-8", readFileSync(path.join(PAGES, "console.css"))));
  return files;
}

/** The console's files by path below /console, built once per process (a failed build is tried again). */
export const consoleAssets: () => Promise<Map<string, ConsoleAsset>> = onceRetrying(buildAssets);

/**
 * `_headers` (the format of Netlify and Cloudflare Pages) for a static copy served from the
 * API's own origin by a reverse proxy (docs/console.md §2).
 */
export function headersFile(): string {
  const lines = ["/console/*"];
  for (const [name, value] of Object.entries(CONSOLE_HEADERS)) lines.push(`  ${name}: ${value}`);
  return `${lines.join("\n")}\n`;
}

/** Writes the console to `outDir` (`npm run build`: dist/console); returns the file names written. */
export async function writeConsole(outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const names: string[] = [];
  for (const [name, a] of await consoleAssets()) {
    writeFileSync(path.join(outDir, name.slice(1)), a.body);
    names.push(name.slice(1));
  }
  writeFileSync(path.join(outDir, "_headers"), headersFile());
  return [...names, "_headers"].sort();
}
