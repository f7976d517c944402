// Shared pieces for end-to-end tests that drive the service through the official SDK
// clients: a recording proxy (the SDK errors carry the gRPC code but not the HTTP status),
// a client factory per API key, an assertion for failed SDK calls, and a plain POST for
// requests the SDK has stamped but the test sends itself (resubmissions, concurrency).
import assert from "node:assert/strict";
import http from "node:http";
import { TurnkeyClient, TurnkeyRequestError as HttpRequestError } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { Turnkey, TurnkeyRequestError as SdkRequestError, type TurnkeyApiClient } from "@turnkey/sdk-server";
import { randomBytes } from "node:crypto";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { newInstance, sigilInit, startServer, type EngineSpec, type InitResult, type Instance, type RunningServer } from "./server.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRec = Record<string, any>;

export interface Exchange {
  method: string;
  path: string;
  status: number;
  body: string;
}

/** A transparent HTTP proxy that forwards every byte unchanged and records each exchange. */
export class RecordingProxy {
  readonly exchanges: Exchange[] = [];
  url = "";
  readonly #agent = new http.Agent({ keepAlive: true });
  #server: http.Server | undefined;

  /** Where requests go; a test that restarts the server on a new port points it there. */
  constructor(public target: string) {}

  async start(): Promise<void> {
    this.#server = http.createServer((req, res) => {
      const target = new URL(this.target);
      const upstream = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent: this.#agent },
        (upRes) => {
          const chunks: Buffer[] = [];
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.on("data", (c: Buffer) => {
            chunks.push(c);
            res.write(c);
          });
          upRes.on("end", () => {
            // Recorded before the client sees the end of the response.
            this.exchanges.push({
              method: req.method ?? "",
              path: req.url ?? "",
              status: upRes.statusCode ?? 0,
              body: Buffer.concat(chunks).toString("utf8"),
            });
            res.end();
          });
        },
      );
      upstream.on("error", (err) => {
        this.exchanges.push({ method: req.method ?? "", path: req.url ?? "", status: 502, body: String(err) });
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
        res.end(String(err));
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as { port: number }).port}`;
  }

  last(): Exchange {
    const e = this.exchanges.at(-1);
    assert.ok(e, "no request went through the proxy");
    return e;
  }

  async stop(): Promise<void> {
    const s = this.#server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
    this.#agent.destroy();
  }
}

/** One API key's view of the service: both official clients, signing with that key. */
export interface Party {
  key: P256KeyPair;
  userId: string;
  orgId: string;
  stamper: ApiKeyStamper;
  /** @turnkey/http: raw responses, no polling. */
  http: TurnkeyClient;
  /** @turnkey/sdk-server: fills the envelope, flattens completed results, polls non-terminal ones. */
  sdk: TurnkeyApiClient;
}

export function partyFor(baseUrl: string, key: P256KeyPair, userId: string, orgId: string): Party {
  const stamper = new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey });
  return {
    key,
    userId,
    orgId,
    stamper,
    http: new TurnkeyClient({ baseUrl }, stamper),
    sdk: new Turnkey({
      apiBaseUrl: baseUrl,
      apiPublicKey: key.publicKey,
      apiPrivateKey: key.privateKey,
      defaultOrganizationId: orgId,
    }).apiClient(),
  };
}

export interface ExpectedError {
  /** HTTP status the server answered with. */
  status: number;
  /** gRPC code in the body (TurnkeyRequestError.code). */
  code: number;
  /** Substring of the server's message. */
  includes?: string;
  /** Prefix of the server's message. */
  startsWith?: string;
  /** The whole message. */
  message?: string;
  /** Path the failing request went to. */
  path?: string;
}

export interface CaughtError {
  code: number;
  message: string;
  details: AnyRec[];
  detail(type: string): AnyRec | undefined;
}

/**
 * Awaits `p`, which must be rejected with an SDK TurnkeyRequestError matching `exp`; the
 * HTTP status is read from the proxy's record of the same request. Sequential calls only.
 */
export async function expectError(proxy: RecordingProxy, p: Promise<unknown>, exp: ExpectedError): Promise<CaughtError> {
  const seen = proxy.exchanges.length;
  let caught: unknown;
  let value: unknown;
  try {
    value = await p;
  } catch (e) {
    caught = e;
  }
  assert.ok(
    caught !== undefined,
    `expected HTTP ${exp.status} / code ${exp.code}, but the call succeeded: ${JSON.stringify(value)?.slice(0, 2000)}`,
  );
  assert.ok(
    caught instanceof HttpRequestError || caught instanceof SdkRequestError,
    `expected a TurnkeyRequestError, got ${caught instanceof Error ? caught.stack : String(caught)}`,
  );
  assert.ok(proxy.exchanges.length > seen, "the failing call made no request");
  const ex = proxy.last();
  const body = JSON.parse(ex.body) as AnyRec;
  assert.equal(ex.status, exp.status, `HTTP status of ${ex.path}: ${ex.body}`);
  assert.equal(caught.code, exp.code, `gRPC code: ${caught.message}`);
  assert.equal(body.code, exp.code);
  assert.equal(typeof body.message, "string");
  if (exp.path !== undefined) assert.equal(ex.path, exp.path);
  if (exp.message !== undefined) assert.equal(body.message, exp.message);
  if (exp.includes !== undefined) {
    assert.ok(body.message.includes(exp.includes), `message ${JSON.stringify(body.message)} lacks ${JSON.stringify(exp.includes)}`);
  }
  if (exp.startsWith !== undefined) {
    assert.ok(
      body.message.startsWith(exp.startsWith),
      `message ${JSON.stringify(body.message)} does not start with ${JSON.stringify(exp.startsWith)}`,
    );
  }
  const details = (caught.details ?? []) as AnyRec[];
  assert.deepEqual(details, body.details ?? []);
  return { code: caught.code, message: body.message as string, details, detail: (t) => details.find((d) => d["@type"] === t) };
}

export interface PostResult {
  status: number;
  json: AnyRec;
}

/** POSTs a request the SDK stamped (`stamp*` methods) exactly as signed. */
export async function postSigned(signed: {
  url: string;
  body: string;
  stamp: { stampHeaderName: string; stampHeaderValue: string };
}): Promise<PostResult> {
  const res = await fetch(signed.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", [signed.stamp.stampHeaderName]: signed.stamp.stampHeaderValue },
    body: signed.body,
  });
  const text = await res.text();
  let json: AnyRec;
  try {
    json = JSON.parse(text) as AnyRec;
  } catch {
    assert.fail(`HTTP ${res.status} answered with a non-JSON body: ${text.slice(0, 500)}`);
  }
  return { status: res.status, json };
}

/** A fresh service (child process) with a root organization, behind a recording proxy. */
export interface Harness {
  inst: Instance;
  init: InitResult;
  server: RunningServer;
  proxy: RecordingProxy;
  /** The root user of the bootstrapped organization, talking through the proxy. */
  root: Party;
  stop(): Promise<void>;
}

export async function startHarness(engine: EngineSpec["name"], orgName: string, env: NodeJS.ProcessEnv = {}): Promise<Harness> {
  const inst = await newInstance(engine, env);
  const init = await sigilInit(inst, ["--name", orgName]);
  const server = await startServer(inst);
  const proxy = new RecordingProxy(server.url);
  await proxy.start();
  const root = partyFor(proxy.url, { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }, init.userId, init.organizationId);
  return {
    inst,
    init,
    server,
    proxy,
    root,
    async stop() {
      await proxy.stop();
      await server.stop();
      await inst.cleanup();
    },
  };
}

/** A sub-organization of `parent`'s organization with one root user holding a fresh key; that root as a Party. */
export async function newSubOrgParty(baseUrl: string, parent: Party, label: string): Promise<Party> {
  const key = generateP256KeyPair();
  const res = await parent.sdk.createSubOrganization({
    subOrganizationName: `${label}-${randomBytes(4).toString("hex")}`,
    rootUsers: [
      {
        userName: `${label}-root`,
        apiKeys: [{ apiKeyName: `${label}-key`, publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
        authenticators: [],
        oauthProviders: [],
      },
    ],
    rootQuorumThreshold: 1,
  });
  assert.equal(res.activity.status, "ACTIVITY_STATUS_COMPLETED");
  const userId = res.rootUserIds?.[0];
  assert.ok(userId, "the sub-organization's root user id");
  return partyFor(baseUrl, key, userId, res.subOrganizationId);
}
