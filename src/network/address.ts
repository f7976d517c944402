// IP addresses and prefix ranges as bytes: parsing (node's net.isIP decides what is an
// address), normalisation (`192.168.1.100/24` → `192.168.1.0/24`, IPv6 in RFC 5952 form) and
// matching. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address: a dual-stack
// socket reports IPv4 clients that way, and a rule must match them either way.
import { isIP } from "node:net";

export type Family = 4 | 6;

export interface Address {
  family: Family;
  bytes: Uint8Array;
}

export interface Range {
  family: Family;
  /** The network address: every bit after the prefix is zero. */
  bytes: Uint8Array;
  prefix: number;
  /** Normalised text: `<network>/<prefix>`. */
  cidr: string;
}

function parseV4(text: string): Uint8Array {
  return Uint8Array.from(text.split(".").map(Number));
}

function parseV6(text: string): Uint8Array {
  const bytes = new Uint8Array(16);
  let head = text;
  let tail = "";
  const gap = text.indexOf("::");
  if (gap >= 0) {
    head = text.slice(0, gap);
    tail = text.slice(gap + 2);
  }
  const groups = (part: string): number[] => {
    if (part === "") return [];
    const out: number[] = [];
    for (const g of part.split(":")) {
      if (g.includes(".")) {
        const v4 = parseV4(g);
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else out.push(parseInt(g, 16));
    }
    return out;
  };
  const h = groups(head);
  const t = groups(tail);
  const all = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  all.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  return bytes;
}

const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
function isMapped(bytes: Uint8Array): boolean {
  return bytes.length === 16 && MAPPED_PREFIX.every((b, i) => bytes[i] === b);
}

/** An address (no prefix, no zone), or undefined when it is not one. Mapped IPv4 → IPv4. */
export function parseAddress(text: string): Address | undefined {
  if (typeof text !== "string" || text.length > 64 || text.includes("%")) return undefined;
  const family = isIP(text);
  if (family === 4) return { family: 4, bytes: parseV4(text) };
  if (family !== 6) return undefined;
  const bytes = parseV6(text);
  return isMapped(bytes) ? { family: 4, bytes: bytes.slice(12) } : { family: 6, bytes };
}

export function formatAddress(a: Address): string {
  if (a.family === 4) return Array.from(a.bytes).join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((a.bytes[i]! << 8) | a.bytes[i + 1]!);
  // RFC 5952: the longest run (≥ 2) of zero groups, the first of equals, becomes "::".
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(":");
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
}

function masked(bytes: Uint8Array, prefix: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const bits = Math.max(0, Math.min(8, prefix - i * 8));
    out[i] = bytes[i]! & ((0xff << (8 - bits)) & 0xff);
  }
  return out;
}

/**
 * A range `address[/prefix]` (a bare address is a single host), normalised; or a sentence
 * saying what is wrong. `bounds` are the broadest prefixes allowed per family.
 */
export function parseRange(text: string, bounds: { 4: number; 6: number } = { 4: 0, 6: 0 }): Range | string {
  if (typeof text !== "string" || text.length === 0) return "must be an IPv4 or IPv6 address or CIDR range";
  if (text.length > 64) return "must be at most 64 characters";
  const slash = text.indexOf("/");
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const addr = parseAddress(addrText);
  if (!addr) return `${JSON.stringify(text)} is not an IPv4 or IPv6 address or CIDR range`;
  const written6 = isIP(addrText) === 6;
  const width = written6 ? 128 : 32;
  let prefix = width;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > width) {
      return `${JSON.stringify(text)}: the prefix length must be a number from 0 to ${width}`;
    }
    prefix = Number(p);
  }
  // ::ffff:a.b.c.d/p is the IPv4 range a.b.c.d/(p-96).
  if (written6 && addr.family === 4) {
    if (prefix < 96) return `${JSON.stringify(text)}: an IPv4-mapped range needs a prefix of at least /96`;
    prefix -= 96;
  }
  const min = bounds[addr.family];
  if (prefix < min) {
    const max = addr.family === 4 ? 32 : 128;
    return `${JSON.stringify(text)}: IPv${addr.family} prefixes must be from /${min} to /${max}`;
  }
  const bytes = masked(addr.bytes, prefix);
  return { family: addr.family, bytes, prefix, cidr: `${formatAddress({ family: addr.family, bytes })}/${prefix}` };
}

export function contains(range: Range, a: Address): boolean {
  if (range.family !== a.family) return false;
  const m = masked(a.bytes, range.prefix);
  for (let i = 0; i < m.length; i++) if (m[i] !== range.bytes[i]) return false;
  return true;
}
