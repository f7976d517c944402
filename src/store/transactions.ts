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
//
// A group whose BEGIN fails (another process holds the write lock past the driver's wait,
// or the store is away) never ran anything: its activities are retried after a growing
// delay until each one's deadline, then answered with the failure (503) — never left
// unanswered, and never retried in a tight loop.
import { sql } from "kysely";
import type { Db, Tx } from "./schema.ts";

export type Transact = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;

/**
 * The store cannot serve right now (connection refused or cut, a timeout, a lock held by
 * another process past its deadline): a transient condition, answered 503 UNAVAILABLE.
 * Deliberately not an ApiError, so code that records an activity's own ApiError as its
 * FAILED result never records an outage as one.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/**
 * A deadline (epoch ms) for the lock waits of the transaction under way, tighter than the
 * SQLite driver's own (sqlite/driver.ts): a group never waits for the write lock past its
 * earliest activity's deadline. Shared by the driver and groupCommit, and set only inside the
 * group's transaction, while the connection is the group's alone (the driver hands it to
 * nobody else mid-transaction). A plain field rather than an AsyncLocalStorage: on Node 20 any
 * AsyncLocalStorage in use turns on promise hooks for every promise of the process (~5% of an
 * activity's CPU time).
 */
export interface LockDeadline {
  until: number | undefined;
}

/** How long an activity may wait for BEGIN to succeed, and the first retry delay. */
export interface GroupCommitOptions {
  deadlineMs: number;
  /** First delay between BEGIN attempts; doubles per attempt (capped at 250 ms). */
  retryBaseMs?: number;
  /** Which BEGIN failures are worth another attempt (transient ones). */
  isTransient?: (err: unknown) => boolean;
  /** The driver's deadline slot (SQLite), set to the group's earliest deadline while it runs. */
  lockDeadline?: LockDeadline;
}

export function transactionPerCall(db: Db): Transact {
  return (work) => db.transaction().execute(work);
}

const MAX_GROUP = 32;

interface Job {
  work: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** Past this (epoch ms), a failing BEGIN answers the job instead of retrying for it. */
  deadline: number;
}

const MAX_RETRY_DELAY_MS = 250;

export function groupCommit(db: Db, opts: GroupCommitOptions = { deadlineMs: 5_000 }): Transact {
  const queue: Job[] = [];
  let draining = false;
  const isTransient = opts.isTransient ?? ((err: unknown) => err instanceof StoreUnavailableError);
  const retryBase = opts.retryBaseMs ?? 5;
  // Consecutive failed BEGINs; reset by any group that started.
  let failedBegins = 0;

  /**
   * The group's transaction. With a deadline slot (SQLite), the connection is taken first and
   * the slot set while it is ours, so BEGIN, every statement and COMMIT wait for the lock no
   * longer than `deadline`; the driver clears it whenever it lends the connection out.
   */
  function inTransaction(deadline: number, run: (tx: Tx) => Promise<void>): Promise<void> {
    const slot = opts.lockDeadline;
    if (!slot) return db.transaction().execute(run);
    return db.connection().execute(async (conn) => {
      slot.until = deadline;
      try {
        await conn.transaction().execute(run);
      } finally {
        slot.until = undefined;
      }
    });
  }

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
        let began = false;
        try {
          const earliest = Math.min(...queue.map((j) => j.deadline));
          await inTransaction(earliest, async (tx) => {
            began = true;
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
          if (!began) {
            // BEGIN failed: no job was taken, all are still queued.
            await beginFailed(err);
            continue;
          }
          failedBegins = 0;
          // The group did not commit: none of it was written, whatever each job saw —
          // including a job cut off by a failing savepoint statement.
          for (const o of outcomes) o.job.reject(err);
          current?.reject(err);
          continue;
        }
        failedBegins = 0;
        for (const o of outcomes) (o.ok ? o.job.resolve : o.job.reject)(o.value);
      }
    } finally {
      draining = false;
    }
  }

  async function beginFailed(err: unknown): Promise<void> {
    if (!isTransient(err)) {
      // Not an outage (a bug, a broken file): retrying cannot help; answer everyone now.
      for (const job of queue.splice(0)) job.reject(err);
      failedBegins = 0;
      return;
    }
    const now = Date.now();
    for (let i = queue.length - 1; i >= 0; i--) {
      if (queue[i]!.deadline <= now) queue.splice(i, 1)[0]!.reject(err);
    }
    if (queue.length === 0) {
      failedBegins = 0;
      return;
    }
    // Back off (asynchronously: the event loop keeps serving) before the next attempt,
    // but not past the earliest remaining deadline, so that job gets its last try.
    const delay = Math.min(retryBase * 2 ** failedBegins++, MAX_RETRY_DELAY_MS);
    const earliest = Math.min(...queue.map((j) => j.deadline));
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(delay, earliest - now))));
  }

  return <T>(work: (tx: Tx) => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (v: unknown) => void, reject, deadline: Date.now() + opts.deadlineMs });
      if (!draining) void drain();
    });
}
