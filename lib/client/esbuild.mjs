// @ts-check
// @sigil/client/esbuild: sigilTurnkeyCrypto(), an esbuild plugin that resolves every import of
// exactly "@turnkey/crypto" to this package's ./turnkey-crypto.mjs (README.md "Using the kit's
// OTP modal"). That module reaches the real @turnkey/crypto as "#turnkey-crypto", which the
// filter does not match; an import of "@turnkey/crypto" from the module itself would be left
// alone too. Runs in Node (the build), never in the bundle.
import { fileURLToPath } from "node:url";

const TARGET = fileURLToPath(new URL("./turnkey-crypto.mjs", import.meta.url));

/** @returns {import("./esbuild.d.mts").SigilEsbuildPlugin} */
export function sigilTurnkeyCrypto() {
  return {
    name: "sigil-turnkey-crypto",
    setup(build) {
      build.onResolve({ filter: /^@turnkey\/crypto$/ }, (args) => (args.importer === TARGET ? undefined : { path: TARGET }));
    },
  };
}
