// One delivery attempt: POST the exact payload bytes with the signed headers to the
// endpoint, dialing the address checked by the URL policy (never following redirects).
// The attempt has one total deadline — name resolution, connect, headers and the whole
// answer — not an inactivity timeout: a receiver that trickles bytes cannot keep it open
// past the deadline, and so never past the lease that guards it (dispatcher.ts).
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { dialAddress } from "./url-policy.ts";
import { SIGNATURE_ALGORITHM, SIGNATURE_VERSION, signDelivery, type SigningKey } from "./signing-keys.ts";

export interface Attempt {
  /** HTTP status, when the endpoint answered. */
  status?: number;
  /** Network error, deadline, refused destination, or an answer that did not complete. */
  error?: string;
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
}

/** Signed headers of the spec, plus the unsigned organization and event type. */
export function deliveryHeaders(req: Omit<DeliveryRequest, "url" | "deadlineAt">): Record<string, string> {
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
  if (budget <= 0) return { error: "deadline passed before the attempt started" };
  const abort = new AbortController();
  const expired = () => `no complete answer within the ${budget} ms deadline`;
  const timer = setTimeout(() => abort.abort(), budget);
  const stop = () => abort.abort();
  req.signal?.addEventListener("abort", stop, { once: true });
  if (req.signal?.aborted) abort.abort();
  try {
    let url: URL;
    let target: { address: string; family: 4 | 6 };
    try {
      url = new URL(req.url);
      // Name resolution cannot be cancelled; the race at least ends the attempt on time.
      const deadline = new Promise<never>((_, reject) => abort.signal.addEventListener("abort", () => reject(new Error(expired())), { once: true }));
      target = await Promise.race([dialAddress(url), deadline]);
    } catch (err) {
      return { error: (err as Error).message };
    }
    const client = url.protocol === "https:" ? https : http;
    return await new Promise<Attempt>((resolve) => {
      let status: number | undefined;
      const r = client.request(
        {
          method: "POST",
          host: target.address,
          family: target.family,
          port: url.port || (url.protocol === "https:" ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          // TLS and virtual hosting still see the name the endpoint was registered with.
          servername: url.protocol === "https:" && !isIP(url.hostname.replace(/^\[|\]$/g, "")) ? url.hostname : undefined,
          headers: { ...deliveryHeaders(req), host: url.host, "content-length": String(req.body.length) },
          agent: false,
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
      r.on("error", (err) => resolve({ status, error: abort.signal.aborted ? expired() : err.message }));
      r.end(req.body);
    });
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
