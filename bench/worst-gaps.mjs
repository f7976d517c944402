// The main thread's CPU time in a server's longest event-loop turns (docs/benchmarks.md §8.2):
// bench/loop-gaps.mjs's figure, with the main thread's own CPU time (Linux:
// /proc/<pid>/task/<pid>/schedstat, nanoseconds) instead of the process's. The process's
// counts every thread: with the PSBT read and signed on a thread of its own (docs/signing.md
// §6), that thread's work during a gap of the main thread is no wait for anyone, yet
// process.cpuUsage adds it in. Also noted per gap: how long the main thread waited for a core
// (schedstat's run-queue time), which is what a loaded machine adds to the wall time.
//
//   BENCH_GAPS_DIR=DIR [BENCH_GAPS_FROM=sign_transaction] NODE_OPTIONS="--import $PWD/bench/worst-gaps.mjs" \
//     npm run bench:worst -- --kinds 3
//   node bench/worst-gaps.mjs DIR            # per server: the longest turns' main-thread CPU ms, percentiles
//
// Imported into every node process NODE_OPTIONS reaches, it acts only in `sigil serve`, and
// only where schedstat exists (Linux); elsewhere use bench/loop-gaps.mjs. — *our choice*
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { armedFrom } from "./gaps-armed.mjs";
import path from "node:path";

const GAP_MS = 20;
const STAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;

if (import.meta.url === `file://${process.argv[1]}`) summarise(process.argv[2]);
else if (process.argv.includes("serve") && process.env.BENCH_GAPS_DIR && existsSync(STAT))
  record(process.env.BENCH_GAPS_DIR, process.env.BENCH_GAPS_FROM);

/** [ns on a core, ns waiting for one] of the main thread so far. */
function thread() {
  const [run, wait] = readFileSync(STAT, "latin1").split(" ");
  return [Number(run), Number(wait)];
}

function record(dir, from) {
  mkdirSync(dir, { recursive: true });
  const gaps = [];
  const armed = armedFrom(from);
  let last = process.hrtime.bigint();
  let [lastRun, lastWait] = thread();
  setInterval(() => {
    const now = process.hrtime.bigint();
    const wallMs = Number(now - last) / 1e6;
    const [run, wait] = thread();
    if (armed() && wallMs > GAP_MS) {
      gaps.push({
        wallMs: Math.round(wallMs * 10) / 10,
        cpuMs: Math.round((run - lastRun) / 1e5) / 10,
        waitMs: Math.round((wait - lastWait) / 1e5) / 10,
      });
    }
    last = now;
    [lastRun, lastWait] = [run, wait];
  }, 2).unref();
  const write = () => writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(gaps));
  setInterval(write, 1000).unref();
  process.on("exit", write);
}

function summarise(dir) {
  if (!dir) throw new Error("usage: node bench/worst-gaps.mjs DIR");
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const gaps = JSON.parse(readFileSync(path.join(dir, f), "utf8"));
    const cpu = gaps.map((g) => g.cpuMs).sort((a, b) => b - a);
    const at = (q) => (cpu.length ? cpu[Math.min(cpu.length - 1, Math.floor(cpu.length * q))] : "-");
    const waited = gaps.reduce((n, g) => n + g.waitMs, 0);
    console.log(
      `${f}: ${gaps.length} turns over ${GAP_MS} ms; main-thread CPU ms of the longest: ${cpu.slice(0, 5).join(", ") || "-"}; ` +
        `95th percentile ${at(0.05)}, 90th ${at(0.1)}; waited for a core in them ${Math.round(waited)} ms`,
    );
  }
}
