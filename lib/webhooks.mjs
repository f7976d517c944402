// @ts-check
// sigil/webhooks: verifying Sigil webhook deliveries and app proofs on the receiving side.
//
// Plain JavaScript on purpose: receivers import it with no TypeScript tooling and no build
// step; node built-ins and the global fetch only. Types are in ./webhooks.d.mts; the JSDoc in
// ./webhooks/ is type-checked against them (tsconfig.lib.json, run by .ci/run).
//
//   webhooks/protocol.mjs        header names, value grammars, the signed bytes
//   webhooks/delivery.mjs        one delivery against a known key (verifyWebhookSignature)
//   webhooks/key-set.mjs         JWK / JWKS / caller-supplied keys → usable Ed25519 keys
//   webhooks/remote-key-set.mjs  the published key set: fetching, Cache-Control caching
//   webhooks/verifier.mjs        createWebhookVerifier (delivery + remote key set)
//   webhooks/app-proofs.mjs      verifyAppProof
export * from "./webhooks/index.mjs";
