// One delivery attempt: POST the exact payload bytes with the signed headers to the
// endpoint, dialing the address checked by the URL policy (never following redirects).
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { dialAddress } from "./url-policy.ts";
import { SIGNATURE_ALGORITHM, SIGNATURE_VERSION, signDelivery, type SigningKey } from "./signing-keys.ts";

export interface Attempt {
  /** HTTP status, when the endpoint answered. */
  status?: number;
  /** Network error, timeout or refused destination. */
  error?: string;
}

export interface DeliveryRequest {
  url: string;
  eventId: string;
  eventType: string;
  organizationId: string;
  body: Buffer;
  key: SigningKey;
  timeoutMs: number;
  now: number;
}

/** Signed headers of the spec, plus the unsigned organization and event type. */
export function deliveryHeaders(req: Omit<DeliveryRequest, "url" | "timeoutMs">): Record<string, string> {
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
  let url: URL;
  let target: { address: string; family: 4 | 6 };
  try {
    url = new URL(req.url);
    target = await dialAddress(url);
  } catch (err) {
    return { error: (err as Error).message };
  }
  const client = url.protocol === "https:" ? https : http;
  return new Promise<Attempt>((resolve) => {
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
        timeout: req.timeoutMs,
        agent: false,
      },
      (res) => {
        res.resume(); // the answer's body is not needed
        res.on("end", () => resolve({ status: res.statusCode }));
        res.on("error", (err) => resolve({ status: res.statusCode, error: err.message }));
      },
    );
    r.on("timeout", () => r.destroy(new Error(`no answer within ${req.timeoutMs} ms`)));
    r.on("error", (err) => resolve({ error: err.message }));
    r.end(req.body);
  });
}

/** 2xx delivered; 5xx and network errors retried; everything else (3xx, 4xx, 429) final. */
export function classify(a: Attempt): "delivered" | "retry" | "failed" {
  if (a.status === undefined) return "retry";
  if (a.status >= 200 && a.status < 300) return "delivered";
  if (a.status >= 500) return "retry";
  return "failed";
}
