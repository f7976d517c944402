// Types for ./esbuild.mjs (@sigil/client/esbuild). Structural, so that this package needs no
// esbuild types of its own: the value fits esbuild's `Plugin`.
export interface SigilEsbuildPlugin {
  name: string;
  setup(build: {
    onResolve(options: { filter: RegExp }, callback: (args: { path: string; importer: string }) => { path: string } | undefined): void;
  }): void;
}

/** Resolves `import … from "@turnkey/crypto"` (exactly) to @sigil/client/turnkey-crypto. */
export declare function sigilTurnkeyCrypto(): SigilEsbuildPlugin;
