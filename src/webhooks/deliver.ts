// One delivery attempt: POST the exact payload bytes with the signed headers to the
// endpoint, dialing the address checked by the URL policy (never following redirects).
// The attempt has one total deadline — name resolution, connect, headers and the whole
// answer — not an inactivity timeout: a receiver that trickles bytes cannot keep it open
// past the deadline, and so never past the lease that guards it (dispatcher.ts).
//
// Connections are kept alive between attempts (a dispatcher's DeliveryAgents): a TCP (and
// TLS) handshake per delivery costs more than the delivery itself. The pool is keyed by the
// checked address the attempt dials (and the TLS name), so a kept connection only ever goes
// where the URL policy allowed. A kept connection the receiver closed meanwhile fails at once
// with a reset; such an attempt is sent once more on a fresh connection (the receiver never
// answered it, and event ids make a repeat harmless).
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { dialAddress, type WebhookUrlPolicy } from "./url-policy.ts";
import { SIGNATURE_ALGORITHM, SIGNATURE_VERSION, signDelivery, type SigningKey } from "./signing-keys.ts";

export interface Attempt {
  /** HTTP status, when the endpoint answered. */
  status?: number;
  /** Network error, deadline, refused destination, or an answer that did not complete. */
  error?: string;
  /** The attempt's total deadline ended it (not part of its record: the error says so). */
  deadline?: true;
}

export interface DeliveryRequest {
  url: string;
  eventId: string;
  eventType: string;
  organizationId: string;
  body: Buffer;
  key: SigningKey;
  /** Epoch ms by which the attempt is over, whatever state it is in. */
  deadlineAt: number;
  now: number;
  /** Aborts the attempt early (the dispatcher stopping); the caller records nothing then. */
  signal?: AbortSignal;
  /** Kept-alive connections to reuse (absent: one connection per attempt). */
  agents?: DeliveryAgents;
  /** The checked address to dial (dialAddress of `url`), when the caller resolved it already. */
  target?: Promise<{ address: string; family: 4 | 6 }>;
  /** Where deliveries may go (the configured policy), checked at the dial. */
  urls: WebhookUrlPolicy;
}

/** Bounds of a dispatcher's connection pool. */
export const KEEP_ALIVE = {
  /** Connections per receiver origin (address, port, TLS name): at least the dispatcher's lanes. */
  maxSocketsPerOrigin: 32,
  /** Connections in all. */
  maxSockets: 1024,
  /**
   * An idle connection is closed after this long: shorter than the usual receivers' own idle
   * timeout (Node's 5 s, nginx's 75 s), so the receiver rarely closes one just as it is reused.
   * A receiver announcing a shorter one (Keep-Alive: timeout=N) is believed.
   */
  idleMs: 4_000,
};

/** One dispatcher's kept-alive connections, per protocol. */
export class DeliveryAgents {
  readonly http: http.Agent;
  readonly https: https.Agent;
  constructor(maxSocketsPerOrigin = KEEP_ALIVE.maxSocketsPerOrigin) {
    const o = {
      keepAlive: true,
      maxSockets: maxSocketsPerOrigin,
      maxFreeSockets: maxSocketsPerOrigin,
      maxTotalSockets: KEEP_ALIVE.maxSockets,
      timeout: KEEP_ALIVE.idleMs,
      // The most recently used connection first: the least likely to have been closed.
      scheduling: "lifo" as const,
    };
    this.http = new http.Agent(o);
    this.https = new https.Agent(o);
  }
  destroy(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

/** The signed headers of docs/webhooks.md §2.2, plus the unsigned organization and event type. */
export function deliveryHeaders(req: Omit<DeliveryRequest, "url" | "deadlineAt" | "urls">): Record<string, string> {
  const timestamp = String(req.now);
  return {
    "content-type": "application/json",
    "x-service-event-id": req.eventId,
    "x-service-signature-key-id": req.key.id,
    "x-service-signature-algorithm": SIGNATURE_ALGORITHM,
    "x-service-signature-version": SIGNATURE_VERSION,
    "x-service-signature": signDelivery(req.key, timestamp, req.eventId, req.body),
    "x-service-timestamp": timestamp,
    "x-service-organization-id": req.organizationId,
    "x-service-event-type": req.eventType,
  };
}

export async function attemptDelivery(req: DeliveryRequest): Promise<Attempt> {
  const budget = req.deadlineAt - Date.now();
  if (budget <= 0) return { error: "deadline passed before the attempt started", deadline: true };
  const abort = new AbortController();
  const expired = () => `no complete answer within the ${budget} ms deadline`;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, budget);
  const stop = () => abort.abort();
  req.signal?.addEventListener("abort", stop, { once: true });
  if (req.signal?.aborted) abort.abort();
  try {
    let url: URL;
    let target: { address: string; family: 4 | 6 };
    try {
      url = new URL(req.url);
      // Name resolution cannot be cancelled; the race at least ends the attempt on time.
      const deadline = new Promise<never>((_, reject) =>
        abort.signal.addEventListener("abort", () => reject(new Error(expired())), { once: true }),
      );
      target = await Promise.race([req.target ?? dialAddress(url, req.urls), deadline]);
    } catch (err) {
      return { error: (err as Error).message, ...(timedOut ? { deadline: true as const } : {}) };
    }
    const https_ = url.protocol === "https:";
    const client = https_ ? https : http;
    const agent = req.agents ? (https_ ? req.agents.https : req.agents.http) : false;
    const headers = { ...deliveryHeaders(req), host: url.host, "content-length": String(req.body.length) };
    const send = () =>
      new Promise<Attempt & { stale?: boolean }>((resolve) => {
        let status: number | undefined;
        const r = client.request(
          {
            method: "POST",
            host: target.address,
            family: target.family,
            port: url.port || (https_ ? 443 : 80),
            path: `${url.pathname}${url.search}`,
            // TLS and virtual hosting still see the name the endpoint was registered with.
            servername: https_ && !isIP(url.hostname.replace(/^\[|\]$/g, "")) ? url.hostname : undefined,
            headers,
            agent,
            // Destroys the socket, whatever it is doing (connecting, waiting, mid-body).
            signal: abort.signal,
          },
          (res) => {
            status = res.statusCode;
            res.resume(); // the answer's body is not needed, only its end
            res.on("end", () => resolve({ status }));
            // An answer cut short (deadline, reset) is not an acknowledgement: see classify.
            res.on("error", (err) => resolve({ status, error: abort.signal.aborted ? expired() : err.message }));
            res.on("close", () => {
              if (!res.complete) resolve({ status, error: abort.signal.aborted ? expired() : "the answer did not complete" });
            });
          },
        );
        r.on("error", (err) => {
          // A kept connection the receiver had closed: nothing of this request was answered.
          const stale =
            status === undefined &&
            r.reusedSocket &&
            !abort.signal.aborted &&
            /ECONNRESET|EPIPE|socket hang up/.test(`${(err as NodeJS.ErrnoException).code ?? ""} ${err.message}`);
          resolve({ status, error: abort.signal.aborted ? expired() : err.message, stale });
        });
        r.end(req.body);
      });
    let a = await send();
    if (a.stale) a = await send();
    if (a.error === undefined) return { status: a.status };
    return { ...(a.status === undefined ? {} : { status: a.status }), error: a.error, ...(timedOut ? { deadline: true as const } : {}) };
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener("abort", stop);
  }
}

/**
 * 2xx delivered; 5xx and network errors retried; everything else (3xx, 4xx, 429) final. A 2xx
 * whose answer did not complete (cut at the deadline) is retried: the receiver may not have
 * finished processing, and event ids make a second delivery harmless.
 */
export function classify(a: Attempt): "delivered" | "retry" | "failed" {
  if (a.status === undefined) return "retry";
  if (a.error !== undefined && a.status < 300) return "retry";
  if (a.status >= 200 && a.status < 300) return "delivered";
  if (a.status >= 500) return "retry";
  return "failed";
}
