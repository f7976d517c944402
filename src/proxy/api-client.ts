// The auth proxy's only way to the public API: HTTP (docs/auth-proxy-service.md §2, §6).
// Channel requests (its configuration) are signed with the proxy secret; forwarded activities
// and queries are ordinary stamped requests by the proxy key. The API's errors are handed to
// the browser as they came (UpstreamError); an API that cannot be reached is 503.
import {
  CONFIG_ROUTE,
  ORIGINS_ROUTE,
  SIGNATURE_HEADER,
  signChannelBody,
  type ConfigResponse,
  type OriginsResponse,
} from "../auth-proxy/channel.ts";
import { FORWARDED_ACTIVITY_TYPES, FORWARDED_QUERIES, type ForwardedActivityType } from "../auth-proxy/forwarded.ts";
import { ApiError, Grpc } from "../errors.ts";
import { stampBody } from "./stamp.ts";

/** An answer of the API other than success, passed through with its status and body. */
export class UpstreamError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly retryAfter: string | undefined,
  ) {
    super(`the API answered ${status}`);
    this.name = "UpstreamError";
  }
}

export function apiUnavailable(what: string): ApiError {
  return new ApiError(Grpc.UNAVAILABLE, "UNSPECIFIED", `the auth proxy could not reach the API (${what}); retry later`);
}

/** What the proxy needs to sign for one config: its id and the sealed key. */
export interface SigningKey {
  configId: string;
  sealedKey: string;
}

export interface ActivityAnswer {
  activity: { id: string; status: string; organizationId: string; result?: Record<string, unknown>; appProofs?: unknown[] };
}

const ALLOWED_TYPES: ReadonlySet<string> = new Set(FORWARDED_ACTIVITY_TYPES);
const ALLOWED_QUERIES: ReadonlySet<string> = new Set(FORWARDED_QUERIES);

/** Paths of the forwarded activity types (the submit route each is sent to). */
const SUBMIT_PATH: ReadonlyMap<ForwardedActivityType, string> = new Map([
  ["ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", "create_sub_organization"],
  ["ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", "create_sub_organization"],
  ["ACTIVITY_TYPE_INIT_OTP_V3", "init_otp"],
  ["ACTIVITY_TYPE_VERIFY_OTP", "verify_otp"],
  ["ACTIVITY_TYPE_VERIFY_OTP_V2", "verify_otp"],
  ["ACTIVITY_TYPE_OTP_LOGIN", "otp_login"],
  ["ACTIVITY_TYPE_OTP_LOGIN_V2", "otp_login"],
  ["ACTIVITY_TYPE_OAUTH2_AUTHENTICATE", "oauth2_authenticate"],
  ["ACTIVITY_TYPE_OAUTH_LOGIN", "oauth_login"],
]);

export class ApiClient {
  constructor(
    readonly apiUrl: string,
    private readonly secret: Buffer,
    private readonly timeoutMs = 20_000,
  ) {}

  async #post(
    path: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; json: unknown; retryAfter: string | undefined }> {
    let res: Response;
    try {
      res = await fetch(this.apiUrl + path, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", ...headers },
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: "error",
      });
    } catch (err) {
      throw apiUnavailable((err as Error).name === "TimeoutError" ? "timed out" : "connection failed");
    }
    const text = await res.text().catch(() => "");
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, retryAfter: res.headers.get("retry-after") ?? undefined };
  }

  /** POST to a channel route, signed with the proxy secret. */
  async #channel(route: string, payload: object): Promise<{ status: number; json: unknown }> {
    const body = JSON.stringify({ ...payload, timestampMs: String(Date.now()) });
    return this.#post(route, body, { [SIGNATURE_HEADER]: signChannelBody(this.secret, body) });
  }

  /** One config and its sealed key; undefined when the API knows no such config (404). */
  async config(configId: string): Promise<ConfigResponse | undefined> {
    const r = await this.#channel(CONFIG_ROUTE, { configId });
    // 400: the API refused the id's form (not one it could have issued) — as unknown as a 404.
    if (r.status === 404 || r.status === 400) return undefined;
    const j = r.json as ConfigResponse | undefined;
    if (r.status !== 200 || !j || typeof j.sealedKey !== "string" || !j.config || typeof j.config !== "object") {
      throw apiUnavailable(`configuration request answered ${r.status}`);
    }
    return j;
  }

  async origins(): Promise<OriginsResponse> {
    const r = await this.#channel(ORIGINS_ROUTE, {});
    const j = r.json as OriginsResponse | undefined;
    if (r.status !== 200 || !j || !Array.isArray(j.origins)) throw apiUnavailable(`origins request answered ${r.status}`);
    return { origins: j.origins.filter((o): o is string => typeof o === "string"), anyOrigin: j.anyOrigin === true };
  }

  /** Submits one forwarded activity, signed by the config's key; answers the completed activity. */
  async submit(
    key: SigningKey,
    type: ForwardedActivityType,
    organizationId: string,
    parameters: object,
    extra: { generateAppProofs?: boolean } = {},
  ): Promise<ActivityAnswer["activity"]> {
    // The one list (src/auth-proxy/forwarded.ts): nothing else is ever sent, whatever calls this.
    const path = SUBMIT_PATH.get(type);
    if (!ALLOWED_TYPES.has(type) || !path) throw new ApiError(Grpc.INTERNAL, "INTERNAL", `the auth proxy does not forward ${type}`);
    const body = JSON.stringify({ type, timestampMs: String(Date.now()), organizationId, parameters, ...extra });
    const r = await this.#signed(key, `/public/v1/submit/${path}`, body);
    const activity = (r as ActivityAnswer | undefined)?.activity;
    if (!activity || typeof activity !== "object") throw apiUnavailable("the submit answer carried no activity");
    if (activity.status !== "ACTIVITY_STATUS_COMPLETED") {
      throw new ApiError(
        Grpc.FAILED_PRECONDITION,
        "REQUEST_INVALID",
        `the forwarded activity did not complete (${String(activity.status).slice(0, 64)}); check the auth proxy user's policies`,
      );
    }
    return activity;
  }

  /** The result of a completed activity under its result key. */
  static result<T>(activity: ActivityAnswer["activity"], resultKey: string): T {
    const r = activity.result?.[resultKey];
    if (!r || typeof r !== "object") throw apiUnavailable(`the activity carried no ${resultKey}`);
    return r as T;
  }

  /** A read the proxy makes (FORWARDED_QUERIES), signed by the config's key. */
  async query<T>(key: SigningKey, op: string, payload: object): Promise<T> {
    if (!ALLOWED_QUERIES.has(op)) throw new ApiError(Grpc.INTERNAL, "INTERNAL", `the auth proxy does not send query ${op}`);
    return (await this.#signed(key, `/public/v1/query/${op}`, JSON.stringify(payload))) as T;
  }

  async #signed(key: SigningKey, path: string, body: string): Promise<unknown> {
    const { stamp } = stampBody(this.secret, key.sealedKey, key.configId, body);
    const r = await this.#post(path, body, { "x-stamp": stamp });
    if (r.status !== 200) {
      if (r.json && typeof r.json === "object" && "code" in r.json) throw new UpstreamError(r.status, r.json, r.retryAfter);
      throw apiUnavailable(`answered ${r.status}`);
    }
    return r.json;
  }

  /** The service keys the API publishes (discovery document). */
  async discoveryKeys(): Promise<{ purpose: string; publicKey: string }[]> {
    let res: Response;
    try {
      res = await fetch(this.apiUrl + "/public/v1/discovery/keys", { signal: AbortSignal.timeout(this.timeoutMs), redirect: "error" });
    } catch {
      throw apiUnavailable("discovery keys");
    }
    const j = (await res.json().catch(() => undefined)) as { keys?: { purpose: string; publicKey: string }[] } | undefined;
    if (res.status !== 200 || !Array.isArray(j?.keys)) throw apiUnavailable(`discovery keys answered ${res.status}`);
    return j.keys;
  }
}
