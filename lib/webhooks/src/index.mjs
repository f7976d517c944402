// @ts-check
// The public surface of @sigil/webhooks (re-exported by ../webhooks.mjs, typed by
// ../webhooks.d.mts; ./public-api.check.ts holds the two to the same exports). Internal
// helpers of the modules below are deliberately not listed.

export {
  EVENT_ID_HEADER,
  EVENT_TYPE_HEADER,
  ORGANIZATION_ID_HEADER,
  SIGNATURE_ALGORITHM,
  SIGNATURE_ALGORITHM_HEADER,
  SIGNATURE_HEADER,
  SIGNATURE_KEY_ID_HEADER,
  SIGNATURE_VERSION,
  SIGNATURE_VERSION_HEADER,
  SIGNED_HEADERS,
  TIMESTAMP_HEADER,
  WEBHOOK_FAILURE_REASONS,
  WEBHOOK_HEADERS,
  webhookSignedMessage,
} from "./protocol.mjs";
export { DEFAULT_MAX_TIMESTAMP_AGE_MS, verifyWebhookSignature } from "./delivery.mjs";
export {
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_FETCH_TIMEOUT_MS,
  DEFAULT_MAX_CACHE_TTL_MS,
  DEFAULT_MIN_REFETCH_INTERVAL_MS,
  DEFAULT_STALE_IF_ERROR_MS,
} from "./remote-key-set.mjs";
export { createWebhookVerifier } from "./verifier.mjs";
export { APP_PROOF_SCHEME, verifyAppProof } from "./app-proofs.mjs";
