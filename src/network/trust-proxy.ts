// SIGIL_TRUST_PROXY: whose X-Forwarded-For the client address is taken from.
//   unset / "false" / "0"  → nobody's: the client is the socket's peer (the default);
//   a number n ≥ 1          → the n proxies nearest to us (the n-th address from the right of
//                             socket peer + X-Forwarded-For is the client);
//   addresses/CIDRs, comma-separated → hops from these addresses are proxies; the client is
//                             the nearest address that is not one of them.
// Fastify (proxy-addr) applies it and gives request.ip; this module only validates the
// setting, so a typo fails at startup instead of trusting everyone.
import { parseRange } from "./address.ts";

export type TrustProxy = false | number | string[];

export function parseTrustProxy(v: string): TrustProxy {
  const text = v.trim();
  if (text === "" || text === "false" || text === "0") return false;
  if (/^[0-9]+$/.test(text)) {
    const n = Number(text);
    if (n > 32) throw new Error(`SIGIL_TRUST_PROXY: at most 32 hops, got ${n}`);
    return n;
  }
  const entries = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (entries.length === 0 || entries.length > 64)
    throw new Error("SIGIL_TRUST_PROXY: give a number of hops or 1 to 64 proxy addresses/CIDRs");
  for (const e of entries) {
    const r = parseRange(e);
    if (typeof r === "string") throw new Error(`SIGIL_TRUST_PROXY: ${r}`);
  }
  return entries;
}

/** The value fastify's `trustProxy` option takes (a hop count as proxy-addr's hop function). */
export function fastifyTrustProxy(t: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (t === false) return false;
  if (typeof t === "number") return (_address, hop) => hop < t;
  return t;
}
