// What clients and receivers fetch without authentication: the webhook key set
// (docs/webhooks.md §3), the app-proof key, the service's keys by purpose, and Sigil as an
// OIDC issuer (its discovery document and key set).
import type { FastifyInstance } from "fastify";
import { ANY_ORIGIN, anyOriginPreflight } from "../../network/cors.ts";
import { notFound } from "../../errors.ts";
import type { Db } from "../../store/schema.ts";
import type { ServiceState } from "../../service-state.ts";
import type { MasterKey } from "../../crypto/envelope.ts";
import { jwks } from "../../webhooks/signing-keys.ts";
import { appProofKeys } from "../../app-proofs/proofs.ts";
import { discoveryDocument, ensureServiceKeys } from "../../auth/service-keys.ts";
import { DISCOVERY_PATH, JWKS_PATH, oidcJwks, openidConfiguration } from "../../logins/oauth/oidc-issuer.ts";

const JWKS_MAX_AGE_SECONDS = 300;

/** The service keys' route: readable from any origin (docs/network.md §4.1). */
export const DISCOVERY_KEYS_PATH = "/public/v1/discovery/keys";

export interface DiscoveryOptions {
  db: Db;
  state: ServiceState;
  /** Absent: the routes that need service keys answer 404. */
  masterKey?: MasterKey;
  /** SIGIL_PUBLIC_URL: what the OIDC documents name, never the request's host. */
  publicUrl: string;
}

export async function discoveryPlugin(app: FastifyInstance, opts: DiscoveryOptions): Promise<void> {
  const { db, state, masterKey } = opts;
  // The webhook key set: public, no authentication. Receivers cache it for max-age and
  // refetch once when a delivery names a key they do not know (a rotation).
  app.get("/public/v1/discovery/webhooks/jwks", async (_req, reply) => {
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return jwks(db);
  });
  // The key app proofs are signed with (service-key signatures, not enclave attestations).
  app.get("/public/v1/discovery/app-proofs/keys", async (_req, reply) => {
    if (!masterKey) throw notFound("app proofs are not enabled on this server");
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return appProofKeys(state.appProofKey, db, masterKey);
  });
  // The service's P-256 keys by purpose (session JWTs, OTP target bundles, verification
  // tokens): what clients pass to the SDK's dangerouslyOverride… parameters.
  app.get(DISCOVERY_KEYS_PATH, ANY_ORIGIN, async (_req, reply) => {
    if (!masterKey) throw notFound("service keys are not enabled on this server");
    await ensureServiceKeys(state.serviceKeys, db, masterKey);
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return discoveryDocument(db);
  });
  // Its preflight, for a page that adds a header to its GET.
  app.options(DISCOVERY_KEYS_PATH, ANY_ORIGIN, anyOriginPreflight);
  // Sigil as an OIDC issuer: the document and key set OIDC libraries verify the tokens of
  // oauth2_authenticate with. Both name SIGIL_PUBLIC_URL, never the request's host.
  const oidcDiscovery = openidConfiguration(opts.publicUrl);
  app.get(DISCOVERY_PATH, async (_req, reply) => {
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return oidcDiscovery;
  });
  app.get(JWKS_PATH, async (_req, reply) => {
    if (!masterKey) throw notFound("service keys are not enabled on this server");
    await ensureServiceKeys(state.serviceKeys, db, masterKey);
    void reply.header("cache-control", `public, max-age=${JWKS_MAX_AGE_SECONDS}`).type("application/json");
    return oidcJwks(db);
  });
}
