// Where webhooks may be sent. Checked when an endpoint is created or updated (the URL's
// shape, literal addresses, well-known internal names) and again at every dial (what the
// host name resolves to now), so DNS cannot smuggle a delivery onto an internal network.
// OAuth provider calls (logins/oauth/provider-client.ts) use the same checks with their own
// development setting (SIGIL_OAUTH_ALLOW_LOOPBACK). Every check is told whose rules apply
// (a `UrlUse`): there is no process-wide setting.
import { BlockList, isIP } from "node:net";
import { lookup } from "node:dns/promises";

/** Who calls and whether loopback is allowed for them. */
export interface UrlUse {
  allowLoopback: boolean;
  /** Names the destination in messages ("webhook", "OAuth provider"). */
  what: string;
}

/**
 * Where webhooks may be sent, as configured: built once from the configuration
 * (SIGIL_WEBHOOKS_ALLOW_LOOPBACK, development only: http(s) to loopback addresses, and only
 * there) and handed to the activities that write endpoints and to the dispatcher, which gives
 * it to its delivery worker. A value, never a module setting (docs/webhooks.md §1.2).
 */
export type WebhookUrlPolicy = Readonly<UrlUse>;

export function webhookUrlPolicy(opts: { allowLoopback: boolean }): WebhookUrlPolicy {
  return Object.freeze({ allowLoopback: opts.allowLoopback, what: "webhook" });
}

/** The production policy: public https destinations only. */
export const STRICT_WEBHOOK_URLS: WebhookUrlPolicy = webhookUrlPolicy({ allowLoopback: false });

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

// Private, shared, link-local (cloud metadata lives at 169.254.169.254), multicast,
// reserved and unspecified ranges.
const INTERNAL = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  INTERNAL.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  // (Forms that carry an IPv4 address — mapped, compatible, NAT64, 6to4 — are judged by
  // what they carry: embeddedIPv4.) fec0::/10 is the deprecated site-local range.
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
  ["2001:db8::", 32],
  ["100::", 64],
] as const)
  INTERNAL.addSubnet(net, bits, "ipv6");

const INTERNAL_NAMES = /^(localhost|metadata|metadata\.google\.internal|instance-data)$|\.(localhost|internal|local)$/i;

function family(address: string): "ipv4" | "ipv6" {
  return isIP(address) === 6 ? "ipv6" : "ipv4";
}

/** The 16 bytes of an IPv6 address (any spelling node accepts, dotted tail included). */
function ipv6Bytes(address: string): Buffer | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.replace(/%.*$/, ""); // a zone id names an interface, not an address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? (text.split("::") as [string, string]) : [text, undefined];
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  if (groups.length !== 8) return undefined;
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

const v4 = (b: Buffer, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const zero = (b: Buffer, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/**
 * The IPv4 address an IPv6 address carries to the IPv4 network, when it does: a delivery to
 * it reaches that IPv4 address (through the stack, a translator or a tunnel), so it is judged
 * as that address. `refuse` says the form is refused whatever it carries.
 */
export function embeddedIPv4(address: string): { ipv4: string; form: string } | { refuse: string } | undefined {
  const b = ipv6Bytes(address);
  if (!b) return undefined;
  const word = (i: number) => b.readUInt16BE(i * 2);
  // ::ffff:0:0/96, IPv4-mapped.
  if (zero(b, 0, 10) && word(5) === 0xffff) return { ipv4: v4(b, 12), form: "IPv4-mapped" };
  // ::ffff:0:0:0/96, SIIT (IPv4-translated).
  if (zero(b, 0, 8) && word(4) === 0xffff && word(5) === 0) return { ipv4: v4(b, 12), form: "IPv4-translated" };
  // ::/96, IPv4-compatible (deprecated). :: and ::1 are judged as themselves.
  if (zero(b, 0, 12) && !(zero(b, 12, 15) && b[15]! <= 1)) return { ipv4: v4(b, 12), form: "IPv4-compatible" };
  // 64:ff9b::/96, the NAT64 well-known prefix: the translator dials the last 32 bits.
  if (word(0) === 0x64 && word(1) === 0xff9b && zero(b, 4, 12)) return { ipv4: v4(b, 12), form: "NAT64" };
  // 64:ff9b:1::/48, local-use NAT64: where the IPv4 address sits depends on the operator's
  // prefix length, so nothing it carries can be judged.
  if (word(0) === 0x64 && word(1) === 0xff9b && word(2) === 1) return { refuse: "a local-use NAT64 address (64:ff9b:1::/48)" };
  // 2002::/16, 6to4: the relay's IPv4 address is bits 16–47.
  if (word(0) === 0x2002) return { ipv4: v4(b, 2), form: "6to4" };
  // 2001::/32, Teredo: the client address is obfuscated and relays sit anywhere; refused.
  if (word(0) === 0x2001 && word(1) === 0) return { refuse: "a Teredo address (2001::/32)" };
  return undefined;
}

/** An IPv4-mapped IPv6 address is judged as the IPv4 address it carries. */
function unmapped(address: string): string {
  const e = embeddedIPv4(address);
  return e && "ipv4" in e && e.form === "IPv4-mapped" ? e.ipv4 : address;
}

export function isLoopback(address: string): boolean {
  const a = unmapped(address);
  return LOOPBACK.check(a, family(a));
}

export function isInternal(address: string): boolean {
  const e = embeddedIPv4(address);
  if (e) return "refuse" in e || INTERNAL.check(e.ipv4, "ipv4");
  return INTERNAL.check(address, family(address));
}

/** Why the address may not receive a delivery, or undefined when it may. */
export function addressProblem(address: string, protocol: string, use: UrlUse): string | undefined {
  if (use.allowLoopback && isLoopback(address)) return undefined;
  const e = embeddedIPv4(address);
  if (e && "refuse" in e) return `${address} is ${e.refuse}, refused`;
  if (isInternal(address)) {
    const carried = e && "ipv4" in e ? ` (${e.form}, carrying ${e.ipv4})` : "";
    return `${address}${carried} is a loopback, private, link-local or reserved address`;
  }
  if (protocol !== "https:") return `${use.what} URLs must use https`;
  return undefined;
}

/** Checks a URL's shape when an endpoint is written. Returns the problem, or undefined. */
export function urlProblem(raw: string, use: UrlUse): string | undefined {
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
  if (isIP(host)) return addressProblem(host, url.protocol, use);
  // Development mode: the name localhost is allowed; the dial still checks it resolves to loopback.
  if (use.allowLoopback && host.toLowerCase() === "localhost") return undefined;
  if (!/^[a-z0-9.-]+$/i.test(host) || host.split(".").some((l) => l === "" || l.length > 63)) return "must name a valid host";
  if (INTERNAL_NAMES.test(host)) return `${host} is an internal host name`;
  if (url.protocol !== "https:") return "must use https";
  return undefined;
}

/** Resolves the host for a dial and checks every address it resolves to. */
export async function dialAddress(
  url: URL,
  use: UrlUse,
  /** Name resolution (tests substitute answers a DNS server could give). */
  resolve: (host: string) => Promise<{ address: string; family: number }[]> = (host) => lookup(host, { all: true }),
): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const found = isIP(host) ? [{ address: host, family: isIP(host) as 4 | 6 }] : await resolve(host);
  if (found.length === 0) throw new Error(`${host} did not resolve`);
  for (const f of found) {
    const problem = addressProblem(f.address, url.protocol, use);
    if (problem) throw new Error(`refusing to ${use.what === "webhook" ? "deliver" : "connect"} to ${host}: ${problem}`);
  }
  return { address: found[0]!.address, family: found[0]!.family as 4 | 6 };
}
