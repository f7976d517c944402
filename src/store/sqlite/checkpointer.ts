// Moves WAL checkpoints of the server's SQLite file to a worker thread (see the worker's
// header). If the worker cannot run, checkpoints go back to SQLite's automatic ones.
import { Worker } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";

const INTERVAL_MS = 200;
const DEFAULT_AUTOCHECKPOINT = 1000;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(db: BetterSqlite3.Database, file: string, onError: (msg: string) => void): Checkpointer {
  const worker = new Worker(new URL("./checkpointer.worker.mjs", import.meta.url), {
    workerData: { file, intervalMs: INTERVAL_MS },
  });
  db.pragma("wal_autocheckpoint = 0");
  let stopped = false;
  const fallBack = (why: string) => {
    if (stopped) return;
    onError(`WAL checkpointer stopped (${why}); SQLite checkpoints inline again`);
    db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
  };
  worker.on("message", (m: { error?: string }) => m.error && onError(`WAL checkpoint failed: ${m.error}`));
  worker.on("error", (err) => fallBack(err.message));
  worker.on("exit", (code) => code !== 0 && fallBack(`exit code ${code}`));
  worker.unref();
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      const done = new Promise<void>((resolve) => {
        worker.once("message", () => resolve());
        worker.once("exit", () => resolve());
      });
      worker.ref(); // keep the process alive until the last checkpoint is done
      worker.postMessage("stop");
      await done;
      await worker.terminate();
    },
  };
}
