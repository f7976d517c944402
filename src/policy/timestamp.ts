// RFC 3339 date-times with a zero UTC offset, as `Timestamp('...')` accepts
// them (docs/policy-language.md §5.2), read to epoch nanoseconds so comparisons are exact.

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(.*)$/s;
const ZERO_OFFSETS = new Set(["Z", "z", "+00:00", "-00:00"]);

export const isLeapYear = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);

export function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeapYear(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Unix milliseconds of a UTC calendar time. Unlike Date.UTC, years 0–99 are taken literally. */
export function utcMillis(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}

/** Epoch nanoseconds of an RFC 3339 date-time whose offset is zero. */
export function parseTimestamp(text: string): Parsed<bigint> {
  const m = RFC3339.exec(text);
  if (!m) return { ok: false, reason: "expected an RFC 3339 date-time such as 2026-03-01T00:00:00Z" };
  const [, ys, mos, ds, hs, mis, ss, frac, offset] = m;
  const y = Number(ys),
    mo = Number(mos),
    d = Number(ds),
    h = Number(hs),
    mi = Number(mis),
    s = Number(ss);
  if (offset === "") return { ok: false, reason: "missing UTC offset (end it with Z)" };
  if (!ZERO_OFFSETS.has(offset!)) {
    return /^[+-]\d{2}:\d{2}$/.test(offset!)
      ? { ok: false, reason: `non-zero UTC offset ${offset}; only Z or +00:00 is allowed` }
      : { ok: false, reason: `invalid UTC offset '${offset}'; only Z or +00:00 is allowed` };
  }
  if (mo < 1 || mo > 12) return { ok: false, reason: `month ${mos} does not exist` };
  if (d < 1 || d > daysInMonth(y, mo)) return { ok: false, reason: `day ${ds} does not exist in ${ys}-${mos}` };
  if (h > 23) return { ok: false, reason: `hour ${hs} is out of range 00-23` };
  if (mi > 59) return { ok: false, reason: `minute ${mis} is out of range 00-59` };
  if (s === 60) return { ok: false, reason: "leap seconds are not supported" };
  if (s > 59) return { ok: false, reason: `second ${ss} is out of range 00-59` };
  if (frac !== undefined && frac.length > 9) return { ok: false, reason: "at most 9 fractional digits (nanoseconds) are allowed" };
  const nanos = frac === undefined ? 0n : BigInt(frac.padEnd(9, "0"));
  return { ok: true, value: BigInt(utcMillis(y, mo, d, h, mi, s)) * 1_000_000n + nanos };
}
