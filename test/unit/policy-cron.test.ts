import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compileExpression } from "../../src/policy/index.ts";
import { CronSpan, parseCron, parseDuration } from "../../src/policy/cron.ts";

/** Evaluates a `time` expression at an instant given as an ISO string. */
function at(expr: string, iso: string): boolean {
  return compileExpression("time", expr)!.evaluate({ nowMs: Date.parse(iso) });
}

function span(cron: string, duration: string, zone: string): CronSpan {
  const c = parseCron(cron);
  const d = parseDuration(duration);
  assert.ok(c.ok && d.ok);
  return new CronSpan(c.value, d.value, zone);
}

const WEEKDAYS_NY = "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')";
const NIGHTS_NY = "CronSpan('0 22 * * *', '8h', 'America/New_York')";
const FRIDAY_NIGHT_UTC = "CronSpan('0 22 * * 5', '8h', 'UTC')";
const FIRST_OR_MONDAY = "CronSpan('0 9 1 * 1', '1h', 'UTC')";
const UNTIL_2026 = `${WEEKDAYS_NY} && time.now < Timestamp('2026-01-01T00:00:00Z')`;
const MARCH_2026 = "time.now >= Timestamp('2026-03-01T00:00:00Z') && time.now < Timestamp('2026-04-01T00:00:00Z')";

describe("CronSpan: docs/policy-language.md §5.4 test vectors", () => {
  const vectors: [string, string, boolean, string][] = [
    [WEEKDAYS_NY, "2026-03-02T14:00:00Z", true, "Mon 09:00 EST: window start is inclusive"],
    [WEEKDAYS_NY, "2026-03-02T13:59:59Z", false, "one second before the window"],
    [WEEKDAYS_NY, "2026-03-02T21:59:59Z", true, "last second of the window"],
    [WEEKDAYS_NY, "2026-03-02T22:00:00Z", false, "17:00 EST: window end is exclusive"],
    [WEEKDAYS_NY, "2026-03-07T15:00:00Z", false, "Saturday"],
    [WEEKDAYS_NY, "2026-03-09T13:00:00Z", true, "Mon 09:00 EDT after spring-forward"],
    [WEEKDAYS_NY, "2026-03-09T12:59:00Z", false, "Mon 08:59 EDT"],
    [NIGHTS_NY, "2026-03-08T10:59:59Z", true, "06:59 EDT, spring-forward night"],
    [NIGHTS_NY, "2026-03-08T11:00:00Z", false, "07:00 EDT, spring-forward night"],
    [NIGHTS_NY, "2026-11-01T09:59:59Z", true, "04:59 EST, fall-back night"],
    [NIGHTS_NY, "2026-11-01T10:00:00Z", false, "05:00 EST, fall-back night"],
    [NIGHTS_NY, "2026-03-04T10:59:00Z", true, "05:59 EST, ordinary night"],
    [NIGHTS_NY, "2026-03-04T11:00:00Z", false, "06:00 EST, ordinary night"],
    [FRIDAY_NIGHT_UTC, "2026-03-07T03:00:00Z", true, "Saturday 03:00Z, from Friday's fire"],
    [FIRST_OR_MONDAY, "2026-04-01T09:30:00Z", true, "Wednesday the 1st: day-of-month match"],
    [FIRST_OR_MONDAY, "2026-04-06T09:30:00Z", true, "Monday the 6th: day-of-week match"],
    [FIRST_OR_MONDAY, "2026-04-02T09:30:00Z", false, "Thursday the 2nd: neither"],
    [UNTIL_2026, "2025-12-31T15:00:00Z", true, "Wed 10:00 EST before the cut-off"],
    [UNTIL_2026, "2026-01-01T15:00:00Z", false, "Thu 10:00 EST after the cut-off"],
    [MARCH_2026, "2026-03-01T00:00:00Z", true, "start of March, inclusive"],
    [MARCH_2026, "2026-03-31T23:59:59Z", true, "end of March"],
    [MARCH_2026, "2026-04-01T00:00:00Z", false, "April, exclusive"],
  ];
  for (const [expr, iso, expected, why] of vectors) {
    it(`${expr} at ${iso} is ${expected} (${why})`, () => {
      assert.equal(at(expr, iso), expected);
    });
  }

  it("Friday-night window also covers Friday itself and ends Saturday 06:00Z", () => {
    assert.equal(at(FRIDAY_NIGHT_UTC, "2026-03-06T22:00:00Z"), true);
    assert.equal(at(FRIDAY_NIGHT_UTC, "2026-03-07T05:59:59Z"), true);
    assert.equal(at(FRIDAY_NIGHT_UTC, "2026-03-07T06:00:00Z"), false);
    assert.equal(at(FRIDAY_NIGHT_UTC, "2026-03-06T21:59:59Z"), false);
  });
});

describe("CronSpan: DST gaps and overlaps", () => {
  it("a fire in the spring-forward gap moves forward by the gap (02:30 → 03:30 EDT)", () => {
    const s = span("30 2 * * *", "10m", "America/New_York");
    // 2026-03-08 02:30 EST does not exist; the fire is 03:30 EDT = 07:30Z.
    assert.equal(s.isActive(Date.parse("2026-03-08T07:29:59Z")), false);
    assert.equal(s.isActive(Date.parse("2026-03-08T07:30:00Z")), true);
    assert.equal(s.isActive(Date.parse("2026-03-08T07:39:59Z")), true);
    assert.equal(s.isActive(Date.parse("2026-03-08T07:40:00Z")), false);
    // The ordinary day before: 02:30 EST = 07:30Z.
    assert.equal(s.isActive(Date.parse("2026-03-07T07:30:00Z")), true);
    // The day after: 02:30 EDT = 06:30Z.
    assert.equal(s.isActive(Date.parse("2026-03-09T06:30:00Z")), true);
    assert.equal(s.isActive(Date.parse("2026-03-09T07:30:00Z")), false);
  });

  it("a repeated fall-back time fires once, at the earlier instant", () => {
    const s = span("30 1 * * *", "30m", "America/New_York");
    // 2026-11-01 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST).
    assert.equal(s.isActive(Date.parse("2026-11-01T05:30:00Z")), true);
    assert.equal(s.isActive(Date.parse("2026-11-01T05:59:59Z")), true);
    assert.equal(s.isActive(Date.parse("2026-11-01T06:00:00Z")), false);
    assert.equal(s.isActive(Date.parse("2026-11-01T06:30:00Z")), false, "no second fire in the repeated hour");
    assert.equal(s.isActive(Date.parse("2026-11-01T06:45:00Z")), false);
  });

  it("hourly fires across the fall-back hour keep their own windows", () => {
    const s = span("0 * * * *", "1m", "America/New_York");
    assert.equal(s.isActive(Date.parse("2026-11-01T05:00:30Z")), true); // 01:00 EDT
    assert.equal(s.isActive(Date.parse("2026-11-01T07:00:30Z")), true); // 02:00 EST
    assert.equal(s.isActive(Date.parse("2026-11-01T06:30:00Z")), false);
  });

  it("fires follow local wall time in a southern-hemisphere zone", () => {
    const s = span("0 9 * * *", "1h", "Australia/Sydney");
    // January: AEDT (+11) → 09:00 local = 22:00Z the day before.
    assert.equal(s.isActive(Date.parse("2026-01-14T22:00:00Z")), true);
    // July: AEST (+10) → 09:00 local = 23:00Z the day before.
    assert.equal(s.isActive(Date.parse("2026-07-14T23:00:00Z")), true);
    assert.equal(s.isActive(Date.parse("2026-07-14T22:30:00Z")), false);
  });
});

describe("CronSpan: day-of-month / day-of-week rule", () => {
  it("both restricted: either matches (OR)", () => {
    const s = span("0 12 13 * 5", "1m", "UTC");
    assert.equal(s.isActive(Date.parse("2026-02-13T12:00:00Z")), true, "Friday the 13th");
    assert.equal(s.isActive(Date.parse("2026-03-13T12:00:00Z")), true, "the 13th (a Friday too)");
    assert.equal(s.isActive(Date.parse("2026-04-13T12:00:00Z")), true, "Monday the 13th: day-of-month");
    assert.equal(s.isActive(Date.parse("2026-04-17T12:00:00Z")), true, "Friday the 17th: day-of-week");
    assert.equal(s.isActive(Date.parse("2026-04-14T12:00:00Z")), false, "Tuesday the 14th");
  });

  it("only day-of-month restricted: day-of-week is ignored", () => {
    const s = span("0 12 13 * *", "1m", "UTC");
    assert.equal(s.isActive(Date.parse("2026-04-13T12:00:00Z")), true);
    assert.equal(s.isActive(Date.parse("2026-04-17T12:00:00Z")), false);
  });

  it("only day-of-week restricted: day-of-month is ignored", () => {
    const s = span("0 12 * * 5", "1m", "UTC");
    assert.equal(s.isActive(Date.parse("2026-04-17T12:00:00Z")), true);
    assert.equal(s.isActive(Date.parse("2026-04-13T12:00:00Z")), false);
  });

  it("month restricts every day rule; lists and list-of-ranges work", () => {
    const s = span("0,30 9-10,15 * 1,3-4 *", "1m", "UTC");
    assert.equal(s.isActive(Date.parse("2026-03-10T09:30:00Z")), true);
    assert.equal(s.isActive(Date.parse("2026-03-10T15:00:00Z")), true);
    assert.equal(s.isActive(Date.parse("2026-03-10T12:00:00Z")), false);
    assert.equal(s.isActive(Date.parse("2026-02-10T09:30:00Z")), false, "February is not listed");
  });
});

describe("CronSpan: windows", () => {
  it("a 7-day window from a weekly fire stays active until the next fire", () => {
    const s = span("0 0 * * 1", "7d", "UTC");
    assert.equal(s.isActive(Date.parse("2026-03-08T23:59:59Z")), true); // Sunday, from the previous Monday
    assert.equal(s.isActive(Date.parse("2026-03-09T00:00:00Z")), true);
  });

  it("a monthly fire is found only within the last 7 days of window", () => {
    const s = span("0 0 1 * *", "7d", "UTC");
    assert.equal(s.isActive(Date.parse("2026-03-07T23:59:59Z")), true);
    assert.equal(s.isActive(Date.parse("2026-03-08T00:00:00Z")), false);
  });

  it("never-firing schedules (31 February) are simply inactive", () => {
    assert.equal(span("0 0 31 2 *", "1h", "UTC").isActive(Date.parse("2026-03-03T00:30:00Z")), false);
  });

  it("answers stay right when the same span is asked about different minutes", () => {
    const s = span("0 9 * * 1-5", "8h", "America/New_York");
    const t = Date.parse("2026-03-02T14:00:00Z");
    assert.equal(s.isActive(t), true);
    assert.equal(s.isActive(t + 59_999), true);
    assert.equal(s.isActive(t - 1), false);
    assert.equal(s.isActive(t + 8 * 3_600_000), false);
    assert.equal(s.isActive(t), true);
  });
});
