// A real OAuth 2.0 / OIDC authorization server for the OAuth end-to-end tests: the
// `oidc-provider` package (v8) on 127.0.0.1, authorization-code flow with PKCE (S256) required
// and confidential clients authenticating with client_secret_basic. Codes are obtained without a
// browser: `authorize()` follows the redirects by hand with its own cookie jar, and the
// interaction page is a small route on the same HTTP server that logs the requested account in
// and grants the requested scopes through `provider.interactionFinished`.
//
// In front of the same server, X-shaped (`GET /2/users/me`) and Discord-shaped
// (`GET /api/users/@me`) user-info routes look the bearer token up in oidc-provider
// (`provider.AccessToken.find`), so Sigil's provider adapters talk to real OAuth tokens in the
// real providers' response shapes. A client may be configured to fail at the token endpoint or at
// user-info (HTTP 500, garbage, or hang forever) so a test chooses the failure by choosing the
// client. Every request is recorded, so a test can show a server was never contacted.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createHash, randomBytes } from "node:crypto";
import Provider from "oidc-provider";
import { exportJWK, generateKeyPair } from "jose";

export type Fault = { at: "token" | "userinfo"; kind: "500" | "garbage" | "hang" };

export interface OidcClient {
  clientId: string;
  clientSecret: string;
  /** Lifetime of the id_tokens issued to this client (seconds; default 3600; negative: already expired when minted). */
  idTokenTtl?: number;
  fault?: Fault;
}

export interface Account {
  id: string;
  username: string;
  name: string;
}

export interface AuthorizeOptions {
  clientId: string;
  accountId: string;
  /** Must be one of the client's redirect URIs (REDIRECT_URI unless changed). */
  redirectUri?: string;
  /** Defaults to a fresh random verifier. */
  codeVerifier?: string;
  nonce?: string;
  scope?: string;
}

export interface Authorized {
  code: string;
  codeVerifier: string;
  redirectUri: string;
  state: string;
}

export interface TokenSet {
  access_token: string;
  id_token?: string;
  token_type: string;
  expires_in: number;
}

/** Where the authorization server sends the browser back to; never fetched (codes are read from the Location). */
export const REDIRECT_URI = "https://app.sigil.test/oauth/callback";

export const pkceChallenge = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

export class OidcServer {
  readonly requests: { method: string; path: string }[] = [];
  /** Every access token this server issued (the secrets the "no bearer token at rest" checks look for). */
  readonly accessTokens: string[] = [];
  readonly accounts = new Map<string, Account>();
  readonly clients: ReadonlyMap<string, OidcClient>;
  issuer = "";
  provider!: Provider;
  #handle!: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  #server: http.Server;
  #sockets = new Set<Socket>();

  private constructor(clients: OidcClient[]) {
    this.clients = new Map(clients.map((c) => [c.clientId, c]));
    this.#server = http.createServer((req, res) => {
      this.requests.push({ method: req.method ?? "", path: (req.url ?? "").split("?")[0]! });
      this.#route(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "server_error", error_description: String(err) }));
      });
    });
    this.#server.on("connection", (s: Socket) => {
      this.#sockets.add(s);
      s.once("close", () => this.#sockets.delete(s));
    });
  }

  static async start(clients: OidcClient[], accounts: Account[] = []): Promise<OidcServer> {
    const self = new OidcServer(clients);
    for (const a of accounts) self.accounts.set(a.id, a);
    await new Promise<void>((resolve) => self.#server.listen(0, "127.0.0.1", resolve));
    self.issuer = `http://127.0.0.1:${(self.#server.address() as AddressInfo).port}`;
    const { privateKey } = await generateKeyPair("RS256", { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: randomBytes(8).toString("hex"), alg: "RS256", use: "sig" };
    self.provider = new Provider(self.issuer, {
      clients: clients.map((c) => ({
        client_id: c.clientId,
        client_secret: c.clientSecret,
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      })),
      pkce: { methods: ["S256"], required: () => true },
      jwks: { keys: [jwk] },
      cookies: { keys: [randomBytes(16).toString("hex")] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      claims: { openid: ["sub"], profile: ["name", "preferred_username"] },
      scopes: ["openid", "profile"],
      ttl: {
        AccessToken: 3600,
        AuthorizationCode: 120,
        Grant: 3600,
        Interaction: 600,
        Session: 3600,
        // Read at mint time: a test may change a client's TTL (a negative one mints an expired token).
        IdToken: (_ctx, _token, client) => self.clients.get(client.clientId)?.idTokenTtl ?? 3600,
      },
      findAccount: (_ctx, id) => {
        const a = self.accounts.get(id);
        if (!a) return undefined;
        return { accountId: a.id, claims: () => ({ sub: a.id, name: a.name, preferred_username: a.username }) };
      },
      renderError: (ctx, out) => {
        ctx.type = "json";
        ctx.body = out;
      },
    });
    self.#handle = self.provider.callback();
    // oidc-provider logs every rejected request through its events; tests read the answers instead.
    self.provider.on("server_error", () => {});
    // Opaque access tokens are their own id (jti).
    self.provider.on("access_token.saved", (token) => self.accessTokens.push(String((token as { jti: string }).jti)));
    return self;
  }

  get jwksUrl(): string {
    return `${this.issuer}/jwks`;
  }
  get tokenUrl(): string {
    return `${this.issuer}/token`;
  }
  /** The requests whose path is `path`, optionally only those after `since` (an index from `mark()`). */
  count(path?: string, since = 0): number {
    return this.requests.slice(since).filter((r) => path === undefined || r.path === path).length;
  }
  mark(): number {
    return this.requests.length;
  }

  async #route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.issuer);
    const interaction = /^\/interaction\/([^/]+)\/login$/.exec(url.pathname);
    if (interaction && req.method === "GET") return this.#login(req, res, url.searchParams.get("account") ?? "");
    if (url.pathname === "/2/users/me" || url.pathname === "/api/users/@me")
      return this.#userInfo(req, res, url.pathname === "/2/users/me" ? "x" : "discord");
    if (url.pathname === "/token" && req.method === "POST") {
      const fault = this.clients.get(basicClientId(req.headers.authorization) ?? "")?.fault;
      if (fault?.at === "token") return this.#fail(res, fault);
    }
    if (url.pathname === "/me") {
      const fault = await this.#tokenFault(req);
      if (fault) return this.#fail(res, fault);
    }
    return this.#handle(req, res);
  }

  /** The interaction route: logs `accountId` in and grants what the client asked for. */
  async #login(req: http.IncomingMessage, res: http.ServerResponse, accountId: string): Promise<void> {
    const details = await this.provider.interactionDetails(req, res);
    if (!this.accounts.has(accountId)) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "unknown account" }));
      return;
    }
    const clientId = String(details.params.client_id);
    const grant = new this.provider.Grant({ accountId, clientId });
    grant.addOIDCScope(String(details.params.scope ?? "openid"));
    const grantId = await grant.save();
    await this.provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  async #tokenFault(req: http.IncomingMessage): Promise<Fault | undefined> {
    const token = bearer(req.headers.authorization);
    if (!token) return undefined;
    const at = await this.provider.AccessToken.find(token);
    const fault = at ? this.clients.get(at.clientId ?? "")?.fault : undefined;
    return fault?.at === "userinfo" ? fault : undefined;
  }

  /** X and Discord shapes of "who am I", answered from oidc-provider's own access tokens. */
  async #userInfo(req: http.IncomingMessage, res: http.ServerResponse, shape: "x" | "discord"): Promise<void> {
    const token = bearer(req.headers.authorization);
    const at = token ? await this.provider.AccessToken.find(token) : undefined;
    const account = at && at.accountId ? this.accounts.get(at.accountId) : undefined;
    if (!at || !account) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify(shape === "x" ? { title: "Unauthorized", status: 401 } : { message: "401: Unauthorized", code: 0 }));
      return;
    }
    const fault = this.clients.get(at.clientId ?? "")?.fault;
    if (fault?.at === "userinfo") return this.#fail(res, fault);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify(
        shape === "x"
          ? { data: { id: account.id, username: account.username, name: account.name } }
          : { id: account.id, username: account.username, global_name: account.name },
      ),
    );
  }

  #fail(res: http.ServerResponse, fault: Fault): void {
    if (fault.kind === "hang") return; // never answered; stop() destroys the socket
    if (fault.kind === "500") {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "server_error", error_description: "the provider is down" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end("<html><body>definitely not JSON {{{");
  }

  /**
   * The authorization-code flow as a browser runs it: /auth → the interaction (logged in as
   * `accountId`, consent granted) → /auth/<uid> → the redirect to the client carrying the code.
   */
  async authorize(o: AuthorizeOptions): Promise<Authorized> {
    const codeVerifier = o.codeVerifier ?? randomBytes(32).toString("base64url");
    const redirectUri = o.redirectUri ?? REDIRECT_URI;
    const state = randomBytes(8).toString("hex");
    const q = new URLSearchParams({
      client_id: o.clientId,
      response_type: "code",
      redirect_uri: redirectUri,
      scope: o.scope ?? "openid profile",
      state,
      code_challenge: pkceChallenge(codeVerifier),
      code_challenge_method: "S256",
    });
    if (o.nonce) q.set("nonce", o.nonce);
    const jar = new Map<string, string>();
    const get = async (url: string) => {
      const res = await fetch(new URL(url, this.issuer), {
        redirect: "manual",
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") },
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const at = pair!.indexOf("=");
        jar.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || !location)
        throw new Error(`authorize: ${url} answered ${res.status}: ${await res.text()}`);
      return location;
    };
    const toInteraction = await get(`/auth?${q}`);
    const interaction = new URL(toInteraction, this.issuer);
    const resume = await get(`${interaction.pathname}/login?account=${encodeURIComponent(o.accountId)}`);
    const back = new URL(await get(resume));
    if (`${back.origin}${back.pathname}` !== redirectUri) throw new Error(`authorize: unexpected redirect ${back}`);
    const code = back.searchParams.get("code");
    if (!code) throw new Error(`authorize: no code in ${back}`);
    if (back.searchParams.get("state") !== state) throw new Error("authorize: state mismatch");
    return { code, codeVerifier, redirectUri, state };
  }

  /** The token exchange as a client does it (for the id_tokens of "trusted issuer" tests). */
  async exchange(clientId: string, a: Authorized): Promise<TokenSet> {
    const client = this.clients.get(clientId);
    if (!client) throw new Error(`unknown client ${clientId}`);
    const res = await fetch(this.tokenUrl, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString("base64")}`,
      },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: a.code,
        redirect_uri: a.redirectUri,
        code_verifier: a.codeVerifier,
      }),
    });
    const body = (await res.json()) as TokenSet & { error?: string };
    if (!res.ok) throw new Error(`token endpoint answered ${res.status}: ${JSON.stringify(body)}`);
    return body;
  }

  /** authorize + exchange: the id_token this server issues for `accountId` to `clientId`. */
  async idToken(clientId: string, accountId: string, nonce: string): Promise<string> {
    const tokens = await this.exchange(clientId, await this.authorize({ clientId, accountId, nonce }));
    if (!tokens.id_token) throw new Error("no id_token");
    return tokens.id_token;
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function bearer(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  return m?.[1];
}

function basicClientId(header: string | undefined): string | undefined {
  const m = /^Basic\s+(\S+)$/i.exec(header ?? "");
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const at = decoded.indexOf(":");
  return at < 0 ? undefined : decodeURIComponent(decoded.slice(0, at));
}
