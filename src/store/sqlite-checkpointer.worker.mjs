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

function checkpoint() {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
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
