// The pure part of `npm run bench`'s report: figures of each scenario turned into ratios to the
// signature floor of the same run, goal verdicts, and the rows `--json` writes
// (docs/benchmarks.md §1.3). No I/O here: test/unit/bench-report.test.ts checks it.

/** A goal as a share of the signature floor's rate (docs/benchmarks.md §1). */
export interface Goal {
  /** Minimum req/s as a percentage of the floor's req/s. */
  minFloorPct: number;
  /** Maximum p99 latency, ms. */
  maxP99?: number;
}

/** A goal judged elsewhere (e.g. a share of another scenario of the same run). */
export interface Verdict {
  goal: string;
  met: boolean;
}

/** What the report needs of a scenario's measurements. */
export interface ScenarioFigures {
  scenario: string;
  /** "sqlite", "postgres", or "-" for the baselines. */
  engine: string;
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU time (all threads) per request, ms. */
  cpuMsPerReq?: number;
  /** Peak RSS of the server during the scenario, MiB. */
  rssMb?: number;
  goal?: Goal;
  verdict?: Verdict;
  problems: string[];
  /** The same scenario served by the --before tree in the same run. */
  before?: ScenarioFigures;
}

/** One object of the `--json` array. */
export interface JsonRow {
  name: string;
  engine: "sqlite" | "postgres" | "none";
  tree: "now" | "before";
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** null when the server's CPU time could not be read. */
  cpuUsPerReq: number | null;
  /** req/s ÷ the signature floor's req/s of the same run (1 = as fast as the floor). */
  floorRatio: number;
  /**
   * The floor's server CPU per request ÷ this scenario's: the same ratio from CPU time, which
   * other load on the machine inflates less than it does req/s; null when either is unknown.
   */
  floorCpuRatio: number | null;
  rssMb: number | null;
  /** The goal in words, null for scenarios without one. */
  goal: string | null;
  met: boolean | null;
  /** false when the run was flagged (non-2xx answers, connection errors, too few bodies). */
  valid: boolean;
}

/** The floor's figures a ratio is taken to. */
export interface Floor {
  rps: number;
  cpuMsPerReq?: number;
}

/** The floor's server CPU per request as a fraction of `cpuMsPerReq`; undefined when either is unknown. */
export function floorCpuRatio(cpuMsPerReq: number | undefined, floor: Floor): number | undefined {
  const f = floor.cpuMsPerReq;
  return cpuMsPerReq !== undefined && f !== undefined && cpuMsPerReq > 0 && f > 0 ? f / cpuMsPerReq : undefined;
}

/** req/s as a fraction of the floor's. */
export function floorRatio(rps: number, floorRps: number): number {
  if (!(floorRps > 0)) throw new Error(`the signature floor's rate must be positive, got ${floorRps}`);
  return rps / floorRps;
}

export function describeGoal(g: Goal): string {
  return `≥ ${g.minFloorPct}% of the floor${g.maxP99 !== undefined ? `, p99 ≤ ${g.maxP99} ms` : ""}`;
}

export function goalMet(f: ScenarioFigures, floorRps: number): boolean | undefined {
  const g = f.goal;
  if (!g) return f.verdict?.met;
  return 100 * floorRatio(f.rps, floorRps) >= g.minFloorPct && (g.maxP99 === undefined || f.p99 <= g.maxP99);
}

const round = (n: number, digits: number) => Number(n.toFixed(digits));
const known = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? null : n);

function row(f: ScenarioFigures, tree: JsonRow["tree"], floor: Floor, goalOf: ScenarioFigures): JsonRow {
  const floorRps = floor.rps;
  const cpu = known(f.cpuMsPerReq);
  const rss = known(f.rssMb);
  const cpuRatio = floorCpuRatio(f.cpuMsPerReq, floor);
  // A before row is judged against the same floor goal, on its own figures; a verdict made
  // elsewhere (a share of another scenario) is each tree's own.
  const goal = goalOf.goal ? describeGoal(goalOf.goal) : (f.verdict?.goal ?? null);
  const met = goalOf.goal ? goalMet({ ...f, goal: goalOf.goal }, floorRps)! : (f.verdict?.met ?? null);
  return {
    name: f.scenario,
    engine: f.engine === "sqlite" || f.engine === "postgres" ? f.engine : "none",
    tree,
    rps: round(f.rps, 1),
    p50Ms: f.p50,
    p99Ms: f.p99,
    cpuUsPerReq: cpu === null ? null : round(1000 * cpu, 1),
    floorRatio: round(floorRatio(f.rps, floorRps), 4),
    floorCpuRatio: cpuRatio === undefined ? null : round(cpuRatio, 4),
    rssMb: rss === null ? null : round(rss, 1),
    goal,
    met: goal === null ? null : met,
    valid: f.problems.length === 0,
  };
}

/** One row per scenario and tree ("now", then "before" where the run measured one). */
export function jsonRows(rows: readonly ScenarioFigures[], floor: Floor): JsonRow[] {
  const out: JsonRow[] = [];
  for (const f of rows) {
    out.push(row(f, "now", floor, f));
    if (f.before) out.push(row(f.before, "before", floor, f));
  }
  return out;
}
