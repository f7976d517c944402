// @ts-check
// @sigil/webhooks: verifying Sigil webhook deliveries and app proofs on the receiving side.
//
// Plain JavaScript on purpose: receivers import it with no TypeScript tooling and no build
// step; node built-ins and the global fetch only. Types are in ./webhooks.d.mts; the JSDoc in
// ./src/ is type-checked against them (tsconfig.lib.json, run by .ci/run).
//
//   src/protocol.mjs             header names, value grammars, the signed bytes
//   src/delivery.mjs             one delivery against a known key (verifyWebhookSignature)
//   src/key-set.mjs              JWK / JWKS / caller-supplied keys → usable Ed25519 keys
//   src/remote-key-set.mjs       the published key set: fetching, Cache-Control caching
//   src/verifier.mjs             createWebhookVerifier (delivery + remote key set)
//   src/app-proofs.mjs           verifyAppProof
export * from "./src/index.mjs";
