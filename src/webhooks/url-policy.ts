// Where webhooks may be sent. Checked when an endpoint is created or updated (the URL's
// shape, literal addresses, well-known internal names) and again at every dial (what the
// host name resolves to now), so DNS cannot smuggle a delivery onto an internal network.
import { BlockList, isIP } from "node:net";
import { lookup } from "node:dns/promises";

let allowLoopback = false;

/** Development only (SIGIL_WEBHOOKS_ALLOW_LOOPBACK): http(s) to loopback addresses, and only there. */
export function configureWebhookUrls(opts: { allowLoopback: boolean }): void {
  allowLoopback = opts.allowLoopback;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

// Private, shared, link-local (cloud metadata lives at 169.254.169.254), multicast,
// reserved and unspecified ranges.
const INTERNAL = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24],
  ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) INTERNAL.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96], ["2001:db8::", 32], ["100::", 64],
] as const) INTERNAL.addSubnet(net, bits, "ipv6");

const INTERNAL_NAMES = /^(localhost|metadata|metadata\.google\.internal|instance-data)$|\.(localhost|internal|local)$/i;

function family(address: string): "ipv4" | "ipv6" {
  return isIP(address) === 6 ? "ipv6" : "ipv4";
}

/** An IPv4-mapped IPv6 address is judged as the IPv4 address it carries. */
function unmapped(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
}

export function isLoopback(address: string): boolean {
  const a = unmapped(address);
  return LOOPBACK.check(a, family(a));
}

export function isInternal(address: string): boolean {
  const a = unmapped(address);
  return INTERNAL.check(a, family(a));
}

/** Why the address may not receive a delivery, or undefined when it may. */
export function addressProblem(address: string, protocol: string): string | undefined {
  if (allowLoopback && isLoopback(address)) return undefined;
  if (isInternal(address)) return `${address} is a loopback, private, link-local or reserved address`;
  if (protocol !== "https:") return "webhook URLs must use https";
  return undefined;
}

/** Checks a URL's shape when an endpoint is written. Returns the problem, or undefined. */
export function urlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https";
  if (url.username || url.password) return "must not contain user information";
  if (!url.hostname) return "must name a host";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) return addressProblem(host, url.protocol);
  // Development mode: the name localhost is allowed; the dial still checks it resolves to loopback.
  if (allowLoopback && host.toLowerCase() === "localhost") return undefined;
  if (!/^[a-z0-9.-]+$/i.test(host) || host.split(".").some((l) => l === "" || l.length > 63)) return "must name a valid host";
  if (INTERNAL_NAMES.test(host)) return `${host} is an internal host name`;
  if (url.protocol !== "https:") return "must use https";
  return undefined;
}

/** Resolves the host for a dial and checks every address it resolves to. */
export async function dialAddress(url: URL): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const found = isIP(host) ? [{ address: host, family: isIP(host) as 4 | 6 }] : await lookup(host, { all: true });
  if (found.length === 0) throw new Error(`${host} did not resolve`);
  for (const f of found) {
    const problem = addressProblem(f.address, url.protocol);
    if (problem) throw new Error(`refusing to deliver to ${host}: ${problem}`);
  }
  return { address: found[0]!.address, family: found[0]!.family as 4 | 6 };
}
