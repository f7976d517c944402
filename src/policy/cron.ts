// `CronSpan(cron, duration, zone)` (docs/policy-language.md §5.3): a 5-field cron subset matched
// against wall-clock time in an IANA zone, each fire opening a window of the
// given length. All windows are equally long, so only the latest fire at or
// before `now` can be active.

import { utcMillis, type Parsed } from "./timestamp.ts";

const MINUTE = 60_000;
const DAY = 86_400_000;
/** Longest allowed window: 7 days. */
export const MAX_DURATION_MINUTES = 7 * 24 * 60;

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly note?: string;
}
const FIELDS: readonly FieldSpec[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day-of-week", min: 0, max: 6, note: " (0 is Sunday)" },
];

export interface CronSchedule {
  /** Minutes of the day (hour*60+minute) that fire, ascending. */
  readonly times: readonly number[];
  readonly doms: readonly boolean[];
  readonly months: readonly boolean[];
  readonly dows: readonly boolean[];
  readonly domRestricted: boolean;
  readonly dowRestricted: boolean;
}

export function parseCron(text: string): Parsed<CronSchedule> {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: false, reason: "empty cron expression" };
  if (trimmed.startsWith("@")) return { ok: false, reason: "macros such as @daily are not supported" };
  const parts = trimmed.split(/\s+/);
  if (parts.length !== 5) {
    return { ok: false, reason: `expected 5 fields (minute hour day-of-month month day-of-week), found ${parts.length}` };
  }
  const sets: boolean[][] = [];
  for (let f = 0; f < 5; f++) {
    const r = parseField(parts[f]!, FIELDS[f]!);
    if (!r.ok) return r;
    sets.push(r.value);
  }
  const [minutes, hours, doms, months, dows] = sets as [boolean[], boolean[], boolean[], boolean[], boolean[]];
  const times: number[] = [];
  for (let h = 0; h < 24; h++) for (let m = 0; m < 60; m++) if (hours[h] && minutes[m]) times.push(h * 60 + m);
  return {
    ok: true,
    value: { times, doms, months, dows, domRestricted: parts[2] !== "*", dowRestricted: parts[4] !== "*" },
  };
}

function parseField(text: string, spec: FieldSpec): Parsed<boolean[]> {
  const set = new Array<boolean>(spec.max + 1).fill(false);
  const fail = (reason: string): Parsed<boolean[]> => ({ ok: false, reason: `${spec.name}: ${reason}` });
  if (text === "*") return { ok: true, value: set.fill(true, spec.min) };
  if (text.includes("/")) return fail("step values (/) are not supported");
  if (/[A-Za-z]/.test(text)) return fail(`'${text}': names and the L/W specifiers are not supported; use numbers`);
  if (/[?#]/.test(text)) return fail(`'${text}': '?' and '#' are not supported`);
  for (const item of text.split(",")) {
    if (item === "*") return fail("'*' cannot be combined with other values");
    const m = /^(\d+)(?:-(\d+))?$/.exec(item);
    if (!m) return fail(`invalid value '${item}' (use a number, a range a-b or a comma list)`);
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (const v of [a, b]) {
      if (v < spec.min || v > spec.max) return fail(`value ${v} is out of range ${spec.min}-${spec.max}${spec.note ?? ""}`);
    }
    if (a > b) return fail(`range ${a}-${b} is reversed`);
    set.fill(true, a, b + 1);
  }
  return { ok: true, value: set };
}

/** `[<n>d][<n>h][<n>m]`, in that order, each unit at most once; result in minutes, 1 … 10080. */
export function parseDuration(text: string): Parsed<number> {
  if (text === "") return { ok: false, reason: "empty duration" };
  if (/[.,]/.test(text)) return { ok: false, reason: "fractional durations are not supported" };
  const bad = /[^0-9dhm]/.exec(text);
  if (bad) return { ok: false, reason: `unsupported unit or character '${bad[0]}' (only d, h and m)` };
  const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$/.exec(text);
  if (!m) return { ok: false, reason: "expected [<n>d][<n>h][<n>m]: units in the order d, h, m, each at most once" };
  const total = Number(m[1] ?? 0) * 1440 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
  if (total === 0) return { ok: false, reason: "the duration must be greater than zero" };
  if (!(total <= MAX_DURATION_MINUTES)) return { ok: false, reason: "the duration must be at most 7 days (7d or 10080m)" };
  return { ok: true, value: total };
}

// One formatter per zone: building them is far more expensive than using them.
// Bounded because spellings are user input (Intl accepts any letter case).
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 1000;

function formatter(zone: string): Intl.DateTimeFormat {
  let fmt = formatters.get(zone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    if (formatters.size >= MAX_FORMATTERS) formatters.clear();
    formatters.set(zone, fmt);
  }
  return fmt;
}

/** True for a time-zone name Intl knows. Offsets such as '+05:00' are not zone names, so refuse them. */
export function isValidTimeZone(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return false;
  try {
    formatter(zone);
    return true;
  } catch (err) {
    if (err instanceof RangeError) return false;
    throw err;
  }
}

// Offsets already computed, per formatter. Fire instants repeat from one
// evaluation to the next, so most look-ups after the first are hits.
const offsetMemo = new WeakMap<Intl.DateTimeFormat, Map<number, number>>();
const MAX_MEMO = 4096;
const DIGITS = /\d+/g;

/** UTC offset (wall clock minus UTC, in ms) of the formatter's zone at instant `t`. */
function offsetAt(fmt: Intl.DateTimeFormat, t: number): number {
  let memo = offsetMemo.get(fmt);
  if (!memo) offsetMemo.set(fmt, (memo = new Map<number, number>()));
  const known = memo.get(t);
  if (known !== undefined) return known;
  // format() is several times faster than formatToParts(); the en-US pattern is
  // month/day/year, hour:minute:second, whatever the separators.
  const [mo = 0, d = 0, y = 0, h = 0, mi = 0, s = 0] = (fmt.format(t).match(DIGITS) ?? []).map(Number);
  const offset = utcMillis(y, mo, d, h % 24, mi, s) - (t - (((t % 1000) + 1000) % 1000));
  if (memo.size >= MAX_MEMO) memo.clear();
  memo.set(t, offset);
  return offset;
}

export class CronSpan {
  readonly #schedule: CronSchedule;
  readonly #durationMs: number;
  readonly #fmt: Intl.DateTimeFormat;
  // The answer only changes on minute boundaries (fires are at second 0 and
  // durations are whole minutes), so the last minute's answer is reused.
  #cachedMinute = NaN;
  #cachedResult = false;

  constructor(schedule: CronSchedule, durationMinutes: number, zone: string) {
    this.#schedule = schedule;
    this.#durationMs = durationMinutes * MINUTE;
    this.#fmt = formatter(zone);
  }

  /** Whether `nowMs` lies in `[f, f + duration)` for some fire `f`. `nowMs` must be a valid Date time value. */
  isActive(nowMs: number): boolean {
    const minute = Math.floor(nowMs / MINUTE);
    if (minute === this.#cachedMinute) return this.#cachedResult;
    const nowOffset = offsetAt(this.#fmt, nowMs);
    const fire = this.#latestFireAtOrBefore(nowMs, nowOffset);
    const result = fire !== undefined && nowMs < fire + this.#durationMs;
    // Zones with second-level offsets (historical local mean time) break the minute argument.
    if (nowOffset % MINUTE === 0 && (fire === undefined || fire % MINUTE === 0)) {
      this.#cachedMinute = minute;
      this.#cachedResult = result;
    }
    return result;
  }

  #latestFireAtOrBefore(now: number, nowOffset: number): number | undefined {
    const { times } = this.#schedule;
    if (times.length === 0) return undefined;
    // Local wall time never runs backwards relative to instants under our
    // gap/overlap rules, so walk local days from newest to oldest; the first
    // day with a fire at or before now holds the answer. 7 days + 1 of slack.
    const today = Math.floor((now + nowOffset) / DAY);
    for (let day = today + 1; day >= today - 8; day--) {
      if (!this.#dayMatches(day)) continue;
      const at = (i: number): number => this.#toInstant(day * DAY + times[i]! * MINUTE);
      const last = times.length - 1;
      const lastFire = at(last);
      if (lastFire <= now) return lastFire;
      const firstFire = at(0);
      if (firstFire > now) continue;
      // Binary search: at(lo) <= now < at(hi).
      let lo = 0,
        hi = last,
        loFire = firstFire;
      while (hi - lo > 1) {
        const mid = (lo + hi) >>> 1;
        const f = at(mid);
        if (f <= now) {
          lo = mid;
          loFire = f;
        } else hi = mid;
      }
      return loFire;
    }
    return undefined;
  }

  #dayMatches(epochDay: number): boolean {
    const s = this.#schedule;
    const date = new Date(epochDay * DAY);
    if (!s.months[date.getUTCMonth() + 1]) return false;
    const dom = s.doms[date.getUTCDate()] === true;
    const dow = s.dows[date.getUTCDay()] === true;
    // Standard cron: when both are restricted either may match; otherwise the restricted one decides.
    if (s.domRestricted && s.dowRestricted) return dom || dow;
    if (s.domRestricted) return dom;
    if (s.dowRestricted) return dow;
    return true;
  }

  /**
   * The instant of a local wall time (given as ms on a UTC-like axis). A time
   * skipped by a forward transition is read with the earlier offset, which moves
   * it forward by the gap; a repeated time takes its earlier instant.
   */
  #toInstant(wall: number): number {
    const before = offsetAt(this.#fmt, wall - DAY);
    const after = offsetAt(this.#fmt, wall + DAY);
    const early = wall - before;
    if (before === after) return early;
    const late = wall - after;
    const earlyOk = offsetAt(this.#fmt, early) === before;
    const lateOk = offsetAt(this.#fmt, late) === after;
    if (earlyOk && lateOk) return Math.min(early, late);
    if (lateOk) return late;
    return early;
  }
}
