// How activities get their transaction. Each activity is all-or-nothing either way.
//
// PostgreSQL: one transaction per activity; the pool runs several at once.
//
// SQLite: one writer, and the cost of a commit (WAL frames for every B-tree page touched)
// dwarfs the inserts themselves. Activities that arrive while a commit is under way are
// therefore grouped: one transaction holds up to MAX_GROUP activities, each inside its own
// SAVEPOINT, so an activity that fails is rolled back alone. Nobody is answered before the
// group's COMMIT has returned, so an answered activity is as durable as with its own commit.
// Inside a group an activity sees the ones before it as if they had committed: the order of
// the group is a valid serial order.
import { sql } from "kysely";
import type { Db, Tx } from "./schema.ts";

export type Transact = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;

export function transactionPerCall(db: Db): Transact {
  return (work) => db.transaction().execute(work);
}

const MAX_GROUP = 32;

interface Job {
  work: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export function groupCommit(db: Db): Transact {
  const queue: Job[] = [];
  let draining = false;

  async function drain(): Promise<void> {
    draining = true;
    try {
      while (queue.length > 0) {
        // better-sqlite3 is synchronous, so a whole group runs without yielding to I/O.
        // Let one turn of the event loop pass first: requests whose signature checks and
        // reads finished meanwhile join this group instead of each paying for a commit.
        await new Promise((resolve) => setImmediate(resolve));
        const outcomes: { job: Job; ok: boolean; value: unknown }[] = [];
        let current: Job | undefined;
        try {
          await db.transaction().execute(async (tx) => {
            while (queue.length > 0 && outcomes.length < MAX_GROUP) {
              const job = (current = queue.shift()!);
              await sql`savepoint activity`.execute(tx);
              try {
                const value = await job.work(tx);
                await sql`release savepoint activity`.execute(tx);
                outcomes.push({ job, ok: true, value });
              } catch (err) {
                await sql`rollback to savepoint activity`.execute(tx);
                await sql`release savepoint activity`.execute(tx);
                outcomes.push({ job, ok: false, value: err });
              }
              current = undefined;
            }
          });
        } catch (err) {
          // The group did not commit: none of it was written, whatever each job saw —
          // including a job cut off by a failing savepoint statement.
          for (const o of outcomes) o.job.reject(err);
          current?.reject(err);
          continue;
        }
        for (const o of outcomes) (o.ok ? o.job.resolve : o.job.reject)(o.value);
      }
    } finally {
      draining = false;
    }
  }

  return <T>(work: (tx: Tx) => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!draining) void drain();
    });
}
