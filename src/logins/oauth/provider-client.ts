// Calls to an OAuth 2.0 provider: the authorization-code exchange (with the PKCE verifier)
// and the user-info request. Each call has one total deadline (resolution, connect, headers
// and the whole answer), follows no redirect, reads at most MAX_ANSWER_BYTES, and dials only
// the address the URL policy accepted (webhooks/url-policy.ts: no private or loopback
// destination unless SIGIL_OAUTH_ALLOW_LOOPBACK). Failures are ProviderErrors whose message
// is safe to show the caller: it may quote the provider's `error` code, never its body, the
// client secret, the code or the bearer token.
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { dialAddress, type UrlUse } from "../../webhooks/url-policy.ts";
import type { OAuthProvider } from "./providers.ts";
import type { OAuthProviderEndpoints } from "./settings.ts";

/** Token and user-info answers are small JSON documents; anything longer is refused. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export class ProviderError extends Error {
  override name = "ProviderError";
}

export interface CallOptions {
  timeoutMs: number;
  allowLoopback: boolean;
  /** Name resolution (tests substitute answers). */
  resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
}

interface Answer {
  status: number;
  body: Buffer;
}

/** A field the provider sent that may be quoted (an RFC 6749 error code is a short ASCII token). */
function quotable(v: unknown): string | undefined {
  return typeof v === "string" && /^[\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(v) ? v : undefined;
}

async function call(
  what: string,
  raw: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string },
  opts: CallOptions,
): Promise<Answer> {
  const use: UrlUse = { allowLoopback: opts.allowLoopback, what: "OAuth provider" };
  const abort = new AbortController();
  const expired = () => new ProviderError(`${what} did not answer within ${opts.timeoutMs} ms`);
  const timer = setTimeout(() => abort.abort(), opts.timeoutMs);
  try {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ProviderError(`${what} is not a valid URL (check SIGIL_OAUTH_PROVIDERS_FILE)`);
    }
    // Name resolution cannot be cancelled; the race at least ends the call on time.
    const deadline = new Promise<never>((_, reject) => abort.signal.addEventListener("abort", () => reject(expired()), { once: true }));
    let target: { address: string; family: 4 | 6 };
    try {
      target = await Promise.race([dialAddress(url, use, opts.resolve), deadline]);
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      throw new ProviderError(`${what}: ${(err as Error).message}`);
    }
    const client = url.protocol === "https:" ? https : http;
    const body = init.body === undefined ? undefined : Buffer.from(init.body, "utf8");
    return await new Promise<Answer>((resolve, reject) => {
      const fail = (err: ProviderError) => {
        r.destroy();
        reject(err);
      };
      const r = client.request(
        {
          method: init.method,
          host: target.address,
          family: target.family,
          port: url.port || (url.protocol === "https:" ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          servername: url.protocol === "https:" && !isIP(url.hostname.replace(/^\[|\]$/g, "")) ? url.hostname : undefined,
          headers: { ...init.headers, host: url.host, ...(body ? { "content-length": String(body.length) } : {}) },
          agent: false,
          signal: abort.signal,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          // Redirects are not followed: a provider endpoint answers itself.
          if (status >= 300 && status < 400)
            return fail(new ProviderError(`${what} answered with a redirect (HTTP ${status}), which is not followed`));
          const declared = Number(res.headers["content-length"]);
          if (Number.isFinite(declared) && declared > MAX_ANSWER_BYTES)
            return fail(new ProviderError(`${what} answered with more than ${MAX_ANSWER_BYTES} bytes`));
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (c: Buffer) => {
            size += c.length;
            if (size > MAX_ANSWER_BYTES) return fail(new ProviderError(`${what} answered with more than ${MAX_ANSWER_BYTES} bytes`));
            chunks.push(c);
          });
          res.on("end", () => resolve({ status, body: Buffer.concat(chunks) }));
          res.on("error", () => reject(abort.signal.aborted ? expired() : new ProviderError(`${what}: the answer did not complete`)));
          res.on("close", () => {
            if (!res.complete) reject(abort.signal.aborted ? expired() : new ProviderError(`${what}: the answer did not complete`));
          });
        },
      );
      r.on("error", (err: NodeJS.ErrnoException) =>
        reject(abort.signal.aborted ? expired() : new ProviderError(`${what} could not be reached${err.code ? ` (${err.code})` : ""}`)),
      );
      r.end(body);
    });
  } finally {
    clearTimeout(timer);
  }
}

function json(what: string, a: Answer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(a.body.toString("utf8"));
  } catch {
    parsed = undefined;
  }
  const obj = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  if (a.status < 200 || a.status >= 300) {
    // RFC 6749 §5.2: {"error": "invalid_grant", …}; only the code is quoted.
    const code = quotable(obj?.error);
    throw new ProviderError(`${what} refused the request (HTTP ${a.status}${code ? `, error "${code}"` : ""})`);
  }
  if (!obj) throw new ProviderError(`${what} answered with something that is not a JSON object`);
  return obj;
}

// x-www-form-urlencoded, as RFC 6749 §2.3.1 encodes the client id and secret for Basic too.
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const formEncode = (s: string) => new URLSearchParams({ s }).toString().slice(2);

export interface ExchangeInput {
  clientId: string;
  /** Plaintext: only ever placed in the request to the provider. */
  clientSecret: string;
  code: string;
  codeVerifier: string;
  redirectUri: string;
}

export interface Exchanged {
  /** The provider's bearer token: never logged or stored. */
  accessToken: string;
  /** The id_token's claims, unverified: the answer came straight from the token endpoint over TLS (OIDC Core §3.1.3.7). */
  idTokenClaims?: Record<string, unknown>;
}

export async function exchangeCode(
  provider: OAuthProvider,
  endpoints: OAuthProviderEndpoints,
  input: ExchangeInput,
  opts: CallOptions,
): Promise<Exchanged> {
  const what = "the provider's token endpoint";
  const fields: Record<string, string> = {
    grant_type: "authorization_code",
    code: input.code,
    redirect_uri: input.redirectUri,
    code_verifier: input.codeVerifier,
    client_id: input.clientId,
  };
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
    "user-agent": "sigil-oauth",
  };
  if (provider.clientAuth === "basic") {
    headers.authorization = `Basic ${Buffer.from(`${formEncode(input.clientId)}:${formEncode(input.clientSecret)}`).toString("base64")}`;
  } else {
    fields.client_secret = input.clientSecret;
  }
  const obj = json(what, await call(what, endpoints.tokenUrl, { method: "POST", headers, body: form(fields) }, opts));
  const accessToken = obj.access_token;
  if (typeof accessToken !== "string" || accessToken === "" || accessToken.length > 8192)
    throw new ProviderError(`${what} answered without a usable access_token`);
  if (obj.token_type !== undefined && (typeof obj.token_type !== "string" || obj.token_type.toLowerCase() !== "bearer")) {
    throw new ProviderError(`${what} answered with a token type other than bearer`);
  }
  const out: Exchanged = { accessToken };
  if (typeof obj.id_token === "string") {
    const claims = decodeClaims(obj.id_token);
    if (claims) out.idTokenClaims = claims;
  }
  return out;
}

function decodeClaims(jwt: string): Record<string, unknown> | undefined {
  const parts = jwt.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as unknown;
    return typeof claims === "object" && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The user-info answer, or (no user-info endpoint configured) the id_token's claims. */
export async function fetchUserInfo(
  endpoints: OAuthProviderEndpoints,
  exchanged: Exchanged,
  opts: CallOptions,
): Promise<Record<string, unknown>> {
  if (endpoints.userInfoUrl === "") {
    if (!exchanged.idTokenClaims)
      throw new ProviderError("the provider's token endpoint answered without an id_token, and no user-info endpoint is configured");
    return exchanged.idTokenClaims;
  }
  const what = "the provider's user-info endpoint";
  return json(
    what,
    await call(
      what,
      endpoints.userInfoUrl,
      {
        method: "GET",
        headers: { authorization: `Bearer ${exchanged.accessToken}`, accept: "application/json", "user-agent": "sigil-oauth" },
      },
      opts,
    ),
  );
}
