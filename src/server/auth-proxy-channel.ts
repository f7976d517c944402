// The API's side of the channel to the auth proxy (docs/auth-proxy.md §4): two internal
// routes, CONFIG_ROUTE and ORIGINS_ROUTE (auth-proxy/channel.ts). Each request is signed with
// the proxy secret derived from this node's master key; the signature and the timestamp are
// checked before anything is read from the store. CONFIG_ROUTE hands out the configuration
// (disabled ones too, so the proxy can say why it refuses) and the proxy key, re-sealed from
// the master key to the proxy secret for the trip.
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from "fastify";
import { invalid, notFound, unauthenticated } from "../errors.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { Executor } from "../store/schema.ts";
import { configView, findConfig, openProxyKey } from "../store/auth-proxy-configs.ts";
import { enabledOrigins } from "../auth-proxy/origins.ts";
import {
  CONFIG_ROUTE,
  MAX_SKEW_MS,
  ORIGINS_ROUTE,
  SIGNATURE_HEADER,
  channelSignatureValid,
  proxySecretFromMasterKey,
  sealForTransport,
  type ConfigResponse,
  type OriginsResponse,
  type OtpChannel,
} from "../auth-proxy/channel.ts";
import { organizationChain } from "../store/organizations.ts";
import { featureOnAlongChain } from "../store/organization-features.ts";
import { OTP_FEATURE } from "../activities/organizations/feature-gate.ts";

export interface AuthProxyChannelOptions {
  db: Executor;
  /** Without one there is no proxy secret: the routes answer 404. */
  masterKey?: MasterKey;
  /** Default Date.now. */
  clock?: () => number;
  /** The OTP channels this API has a transport for (LoginSettings email / sms); default none. */
  otpChannels?: readonly OtpChannel[];
}

const OTP_TYPE = { email: "OTP_TYPE_EMAIL", sms: "OTP_TYPE_SMS" } as const;

/**
 * The channels init_otp can deliver in the organization: a transport here, and the channel's
 * feature on along its chain, as init_otp checks it (docs/auth-proxy-service.md §5.1).
 */
async function deliverableChannels(db: Executor, organizationId: string, transports: readonly OtpChannel[]): Promise<OtpChannel[]> {
  if (transports.length === 0) return [];
  const chain = await organizationChain(db, organizationId);
  const out: OtpChannel[] = [];
  for (const c of transports) if (await featureOnAlongChain(db, chain, OTP_FEATURE[OTP_TYPE[c]])) out.push(c);
  return out;
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const refused = (why: string) => unauthenticated("UNAUTHENTICATED", `auth proxy channel: ${why}`);

/** The body, once its signature and timestamp are good (docs/auth-proxy.md §4); throws 401 otherwise. */
function authenticatedBody(req: FastifyRequest, secret: Buffer, now: number): Record<string, unknown> {
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  if (!channelSignatureValid(secret, raw, req.headers[SIGNATURE_HEADER])) throw refused(`missing or wrong ${SIGNATURE_HEADER}`);
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch {
    throw invalid("auth proxy channel: the body must be a JSON object");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid("auth proxy channel: the body must be a JSON object");
  const b = body as Record<string, unknown>;
  const ts = typeof b.timestampMs === "string" && /^[0-9]{1,16}$/.test(b.timestampMs) ? Number(b.timestampMs) : NaN;
  if (!(Math.abs(now - ts) <= MAX_SKEW_MS))
    throw refused(`timestampMs must be within ${MAX_SKEW_MS / 1000} s of the server's clock (${now})`);
  return b;
}

export const authProxyChannel: FastifyPluginAsync<AuthProxyChannelOptions> = async (app: FastifyInstance, opts) => {
  const clock = opts.clock ?? Date.now;
  const secret = opts.masterKey ? proxySecretFromMasterKey(opts.masterKey) : undefined;
  const master = opts.masterKey;
  const disabled = () => notFound("the auth proxy channel is not available on this server (no master key)");

  app.post(CONFIG_ROUTE, async (req): Promise<ConfigResponse> => {
    if (!secret || !master) throw disabled();
    const body = authenticatedBody(req, secret, clock());
    const configId = body.configId;
    if (typeof configId !== "string" || !UUID.test(configId))
      throw invalid("auth proxy channel: configId must be a config id (UUID)", [{ field: "configId", description: "must be a UUID" }]);
    const row = await findConfig(opts.db, configId.toLowerCase());
    if (!row) throw notFound(`no auth proxy configuration ${configId}`);
    const pkcs8 = await openProxyKey(master, row);
    try {
      // The organization's name: the app name of OTP messages when the config names none (docs/auth-proxy-service.md §5).
      const org = await opts.db.selectFrom("organizations").select("name").where("id", "=", row.organization_id).executeTakeFirst();
      const otpChannels = await deliverableChannels(opts.db, row.organization_id, opts.otpChannels ?? []);
      return {
        config: configView(row),
        sealedKey: sealForTransport(secret, pkcs8, row.id),
        ...(org ? { organizationName: org.name } : {}),
        otpChannels,
      };
    } finally {
      pkcs8.fill(0);
    }
  });

  app.post(ORIGINS_ROUTE, async (req): Promise<OriginsResponse> => {
    if (!secret) throw disabled();
    authenticatedBody(req, secret, clock());
    return enabledOrigins(opts.db);
  });
};
