// @ts-check
// @sigil/client: browser-side helpers for Sigil's login flows, next to @turnkey/core.
//
// @turnkey/core's verifyOtp encrypts the OTP code to init_otp's target bundle only after
// checking the bundle against the hosted service's signer key, which it pins with no override:
// against Sigil it fails client-side. This entry does the same work with the key Sigil
// publishes (GET /public/v1/discovery/keys), and checks session JWTs and verification tokens
// with the published keys. No node: imports — it runs in browsers (and in Node 20+); its
// dependencies are @noble/curves, @noble/hashes and @hpke/core. Types: ./client.d.mts.
//
//   src/bytes.mjs         hex and base64url
//   src/discovery.mjs     the published key set
//   src/bundles.mjs       signed bundles and HPKE; wallet export bundles and import bundles
//   src/otp.mjs           target bundle check, HPKE encryption of the code (encryptedOtpBundle)
//   src/tokens.mjs        session JWT and verification token checks
//   src/proxy.mjs         verifyOtpWithProxy: core's OTP verify step through the auth proxy
//   src/index.mjs         createSigilClient (the helpers bound to one service)
// Other entries of the package: ./turnkey-crypto.mjs (@sigil/client/turnkey-crypto, the drop-in
// for @turnkey/crypto that core's verifyOtp needs) and ./esbuild.mjs (@sigil/client/esbuild).
export * from "./src/index.mjs";
