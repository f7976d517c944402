// The pure part of `npm run bench`'s report (docs/benchmarks.md §1.2 and §1.3): ratios to the
// signature floor, goal verdicts, the `--json` rows, and how the cores are split for pinning.
// The benchmark itself is not run here.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { floorCpuRatio, floorRatio, goalMet, jsonRows, type ScenarioFigures } from "../../bench/floor-report.ts";
import { splitCores } from "../../bench/pin.ts";

const FLOOR = 20_000;

function fig(over: Partial<ScenarioFigures>): ScenarioFigures {
  return {
    scenario: "stamped query (whoami)",
    engine: "sqlite",
    rps: 17_000,
    p50: 2,
    p99: 5,
    cpuMsPerReq: 0.114,
    rssMb: 152.26,
    problems: [],
    ...over,
  };
}

describe("bench report: ratios to the signature floor", () => {
  it("divides by the floor's rate and refuses a floor that measured nothing", () => {
    assert.equal(floorRatio(5_000, FLOOR), 0.25);
    assert.throws(() => floorRatio(5_000, 0), /floor/);
    assert.throws(() => floorRatio(5_000, Number.NaN), /floor/);
  });

  it("takes the CPU ratio the other way round (the floor's CPU over the scenario's) and only when both are known", () => {
    assert.equal(floorCpuRatio(0.2, { rps: FLOOR, cpuMsPerReq: 0.05 }), 0.25);
    assert.equal(floorCpuRatio(undefined, { rps: FLOOR, cpuMsPerReq: 0.05 }), undefined);
    assert.equal(floorCpuRatio(Number.NaN, { rps: FLOOR, cpuMsPerReq: 0.05 }), undefined);
    assert.equal(floorCpuRatio(0.2, { rps: FLOOR }), undefined);
  });

  it("judges a floor goal on the share and on p99, each alone able to miss it", () => {
    const goal = { minFloorPct: 33, maxP99: 20 };
    assert.equal(goalMet(fig({ rps: 6_600, p99: 20, goal }), FLOOR), true);
    assert.equal(goalMet(fig({ rps: 6_599, p99: 20, goal }), FLOOR), false);
    assert.equal(goalMet(fig({ rps: 9_000, p99: 21, goal }), FLOOR), false);
    assert.equal(goalMet(fig({ rps: 100, goal: undefined }), FLOOR), undefined);
    assert.equal(goalMet(fig({ verdict: { goal: "≥ 80% of create_user_tag's rate", met: true } }), FLOOR), true);
  });
});

describe("bench report: --json rows", () => {
  it("gives one row per scenario and tree, in the documented shape and units", () => {
    const rows = jsonRows(
      [
        fig({ scenario: "signature floor", engine: "-", rps: FLOOR, cpuMsPerReq: 0.05 }),
        fig({
          goal: { minFloorPct: 85 },
          before: fig({ rps: 12_400, p99: 9, cpuMsPerReq: undefined, rssMb: Number.NaN, problems: ["3 non-2xx responses"] }),
        }),
        fig({
          scenario: "stamped activity (sign_raw_payload)",
          engine: "postgres",
          rps: 300,
          p99: 45,
          cpuMsPerReq: 1.7771,
          verdict: { goal: "≥ 80% of create_user_tag's rate", met: false },
        }),
      ],
      { rps: FLOOR, cpuMsPerReq: 0.05 },
    );
    assert.deepEqual(rows, [
      {
        name: "signature floor",
        engine: "none",
        tree: "now",
        rps: 20_000,
        p50Ms: 2,
        p99Ms: 5,
        cpuUsPerReq: 50,
        floorRatio: 1,
        floorCpuRatio: 1,
        rssMb: 152.3,
        goal: null,
        met: null,
        valid: true,
      },
      {
        name: "stamped query (whoami)",
        engine: "sqlite",
        tree: "now",
        rps: 17_000,
        p50Ms: 2,
        p99Ms: 5,
        cpuUsPerReq: 114,
        floorRatio: 0.85,
        floorCpuRatio: 0.4386,
        rssMb: 152.3,
        goal: "≥ 85% of the floor",
        met: true,
        valid: true,
      },
      // The before tree is judged against the same goal, on its own figures; unknowns are null.
      {
        name: "stamped query (whoami)",
        engine: "sqlite",
        tree: "before",
        rps: 12_400,
        p50Ms: 2,
        p99Ms: 9,
        cpuUsPerReq: null,
        floorRatio: 0.62,
        floorCpuRatio: null,
        rssMb: null,
        goal: "≥ 85% of the floor",
        met: false,
        valid: false,
      },
      {
        name: "stamped activity (sign_raw_payload)",
        engine: "postgres",
        tree: "now",
        rps: 300,
        p50Ms: 2,
        p99Ms: 45,
        cpuUsPerReq: 1777.1,
        floorRatio: 0.015,
        floorCpuRatio: 0.0281,
        rssMb: 152.3,
        goal: "≥ 80% of create_user_tag's rate",
        met: false,
        valid: true,
      },
    ]);
    // What tools read survives a JSON round trip unchanged (no NaN, no undefined).
    assert.deepEqual(JSON.parse(JSON.stringify(rows)), rows);
  });
});

describe("bench pinning: the core split", () => {
  it("puts the server alone on core 0 and everything else on the rest", () => {
    assert.deepEqual(splitCores(2), { server: "0", rest: "1", all: "0-1" });
    assert.deepEqual(splitCores(8), { server: "0", rest: "1-7", all: "0-7" });
  });

  it("has no split on one core (the benchmark then runs unpinned, with a warning)", () => {
    assert.ok("why" in splitCores(1));
    assert.ok("why" in splitCores(0));
  });
});
