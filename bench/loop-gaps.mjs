// The CPU time of a server's longest event-loop turns, a figure a loaded machine distorts less
// than the other tenant's waits (docs/benchmarks.md §8.2).
//
//   BENCH_GAPS_DIR=DIR [BENCH_GAPS_FROM=sign_transaction] NODE_OPTIONS="--import $PWD/bench/loop-gaps.mjs" \
//     npm run bench:worst -- --kinds 3
//   node bench/loop-gaps.mjs DIR            # summarises what the servers wrote
//
// Imported into every node process NODE_OPTIONS reaches, it acts only in `sigil serve`: a 2 ms
// interval notes each turn it could not run for more than 20 ms (a gap) and the process's CPU
// time (process.cpuUsage: all its threads) spent in it. On a quiet machine a gap's wall time
// and CPU time agree; on a loaded one the wall time also holds the time the process waited for
// a core, the CPU time mostly does not. Gaps are noted from the first request whose URL holds
// BENCH_GAPS_FROM (e.g. the kind's operation) on, so start-up and set-up stay out; each server
// writes DIR/<pid>.json every second and when it exits.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { armedFrom } from "./gaps-armed.mjs";
import path from "node:path";

const GAP_MS = 20;

if (import.meta.url === `file://${process.argv[1]}`) summarise(process.argv[2]);
else if (process.argv.includes("serve") && process.env.BENCH_GAPS_DIR) record(process.env.BENCH_GAPS_DIR, process.env.BENCH_GAPS_FROM);

function record(dir, from) {
  mkdirSync(dir, { recursive: true });
  const gaps = [];
  const armed = armedFrom(from);
  let last = process.hrtime.bigint();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const now = process.hrtime.bigint();
    const wallMs = Number(now - last) / 1e6;
    if (armed() && wallMs > GAP_MS) {
      const cpu = process.cpuUsage(lastCpu);
      gaps.push({ wallMs: Math.round(wallMs * 10) / 10, cpuMs: Math.round((cpu.user + cpu.system) / 100) / 10 });
    }
    last = now;
    lastCpu = process.cpuUsage();
  }, 2).unref();
  const write = () => writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(gaps));
  setInterval(write, 1000).unref();
  process.on("exit", write);
}

function summarise(dir) {
  if (!dir) throw new Error("usage: node bench/loop-gaps.mjs DIR");
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const gaps = JSON.parse(readFileSync(path.join(dir, f), "utf8"));
    const cpu = gaps.map((g) => g.cpuMs).sort((a, b) => b - a);
    const at = (q) => (cpu.length ? cpu[Math.min(cpu.length - 1, Math.floor(cpu.length * q))] : "-");
    console.log(
      `${f}: ${gaps.length} turns over ${GAP_MS} ms; CPU ms of the longest: ${cpu.slice(0, 5).join(", ") || "-"}; 95th percentile ${at(0.05)}, 90th ${at(0.1)}`,
    );
  }
}
