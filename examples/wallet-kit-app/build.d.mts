// Types of build.mjs (for its callers in TypeScript, e.g. the example's browser test).
import type { Metafile, Plugin } from "esbuild";

export interface BuildAppOptions {
  /** Where index.html, app.js and app.css go (default: dist/ next to build.mjs). */
  outDir?: string;
  /** Written as outDir/config.json when given. */
  config?: Record<string, unknown>;
  /** Extra folders to resolve packages from. */
  nodePaths?: string[];
  /** Instead of `sigilTurnkeyCrypto()` from @sigil/client/esbuild. */
  plugins?: Plugin[];
  /** Default true. */
  minify?: boolean;
}

export declare function buildApp(o?: BuildAppOptions): Promise<{ outDir: string; metafile: Metafile }>;
