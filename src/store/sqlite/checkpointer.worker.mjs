// Runs SQLite WAL checkpoints on a worker thread (plain JS: workers do not inherit the tsx
// loader). Checkpointing copies WAL pages into the database file and fsyncs it; done on the
// connection that commits, it stalls the event loop every ~1000 pages. Here it overlaps with
// request handling on the other core. PASSIVE never blocks readers or the writer.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const db = new Database(workerData.file);
db.pragma("busy_timeout = 5000");
const every = workerData.intervalMs;

let timer = setInterval(checkpoint, every);

// PASSIVE checkpoints alone never let the WAL shrink under steady writes: SQLite rewinds
// the log only when a writer finds it fully copied back, and the writer keeps appending.
// Past this many frames (~32 MiB with 4 KiB pages), one TRUNCATE checkpoint copies the
// short remainder and resets the file; the writer waits for it (busy_timeout) for a moment.
const MAX_WAL_FRAMES = 4096;

function checkpoint() {
  try {
    const [r] = db.pragma("wal_checkpoint(PASSIVE)");
    if (r && r.log > MAX_WAL_FRAMES) db.pragma("wal_checkpoint(RESTART)");
  } catch (err) {
    parentPort.postMessage({ error: String(err?.message ?? err) });
  }
}

parentPort.on("message", (msg) => {
  if (msg === "stop") {
    clearInterval(timer);
    timer = undefined;
    checkpoint();
    db.close();
    parentPort.postMessage({ stopped: true });
  }
});
