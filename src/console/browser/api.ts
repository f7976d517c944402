/// <reference lib="dom" />
// The console as a client of the public API (docs/console.md §4): POST /public/v1/query/<op>
// and /public/v1/submit/<op> on its own origin, each body serialised once and stamped over
// exactly those bytes (docs/stamps.md §1.2). Errors come back as ApiError with the SDK body's
// message and code, for the error banner.
import { apiKeyStamp, type SigningKey, type Stamp } from "./stamps.ts";

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** The SDK body's turnkeyErrorCode when it has one, else its gRPC code, else the HTTP status. */
    readonly code: string,
  ) {
    super(message);
  }
}

export type Stamper = (body: string) => Promise<Stamp>;

export const keyStamper =
  (key: SigningKey): Stamper =>
  (body) =>
    apiKeyStamp(key, body);

async function post(path: string, body: string, stamp: Stamper): Promise<Json> {
  const s = await stamp(body);
  let res: Response;
  try {
    res = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", [s.header]: s.value },
      body,
      credentials: "omit",
      cache: "no-store",
    });
  } catch (err) {
    throw new ApiError(`the server could not be reached: ${(err as Error).message}`, 0, "NETWORK");
  }
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    json = { message: text.slice(0, 500) };
  }
  if (!res.ok) {
    const code = json.turnkeyErrorCode ?? (json.code !== undefined ? `code ${json.code}` : `HTTP ${res.status}`);
    throw new ApiError(String(json.message ?? `HTTP ${res.status}`), res.status, String(code));
  }
  return json;
}

let lastTimestamp = 0;

export class Api {
  constructor(
    readonly stamp: Stamper,
    /** Called when the server says the key has expired (API_KEY_EXPIRED, docs/stamps.md §2.4): the shell logs out. */
    private readonly onExpired?: () => void,
  ) {}

  private async post(path: string, body: string): Promise<Json> {
    try {
      return await post(path, body, this.stamp);
    } catch (err) {
      if (err instanceof ApiError && err.code === "API_KEY_EXPIRED") this.onExpired?.();
      throw err;
    }
  }

  /** A query: a flat body with organizationId first. */
  query<T = Json>(op: string, organizationId: string, body: Json = {}): Promise<T> {
    return this.post(`/public/v1/query/${op}`, JSON.stringify({ organizationId, ...body })) as Promise<T>;
  }

  /** An activity: the SDK's envelope (distinct timestamps, so two equal intents are two activities). */
  async submit(op: string, type: string, organizationId: string, parameters: Json): Promise<Json> {
    lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
    const body = JSON.stringify({ type, timestampMs: String(lastTimestamp), organizationId, parameters });
    const res = await this.post(`/public/v1/submit/${op}`, body);
    return res.activity as Json;
  }
}
