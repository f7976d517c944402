// When a delivery is attempted again. Like Stripe's and Svix's: a fixed schedule of delays
// that spans more than a day, so an outage of hours loses nothing; each delay is jittered
// so that many deliveries failing together do not come back together.

/** Delay before each attempt: the first immediately, then after 5 s, 5 min, … (≈ 27.6 h in all). */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** An endpoint failing continuously for this long is disabled. */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 86_400_000;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "250ms", "5s", "30m", "2h", "5d", or plain milliseconds. */
export function parseDuration(text: string, name: string): number {
  const m = /^(\d{1,9})(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new Error(`${name}: ${JSON.stringify(text)} is not a duration (e.g. 500ms, 5s, 30m, 2h, 5d)`);
  return Number(m[1]) * UNIT_MS[m[2] ?? "ms"]!;
}

/** A comma-separated list of durations: the delay before each attempt, the first usually 0. */
export function parseSchedule(text: string, name: string): number[] {
  const parts = text.split(",");
  if (parts.length < 1 || parts.length > 50) throw new Error(`${name} must list 1 to 50 delays`);
  const delays = parts.map((p) => parseDuration(p, name));
  if (delays.some((d) => d > 7 * 86_400_000)) throw new Error(`${name}: a delay may be at most 7 days`);
  return delays;
}

/** Duration as docs/configuration.md writes it: the largest unit that divides it. */
export function formatDuration(ms: number): string {
  for (const unit of ["d", "h", "m", "s"] as const) if (ms !== 0 && ms % UNIT_MS[unit]! === 0) return `${ms / UNIT_MS[unit]!}${unit}`;
  return `${ms}ms`;
}

/**
 * Delay before attempt `n + 1` of a schedule after `n` attempts (n ≥ 1), or undefined when
 * the schedule is spent. Jittered to 80–120 %.
 */
export function retryDelayMs(schedule: readonly number[], attempts: number, random = Math.random): number | undefined {
  const delay = schedule[attempts];
  if (delay === undefined) return undefined;
  return Math.round(delay * (0.8 + 0.4 * random()));
}
