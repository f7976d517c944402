// The pool Kysely is handed on PostgreSQL: clients whose queries cannot hang, whose failures
// are not reused, and whose parameterised statements are prepared once per connection under
// names kept by the pool's own statement cache (docs/storage.md §3).
import { createHash } from "node:crypto";
import type pg from "pg";
import type { PostgresPool, PostgresPoolClient } from "kysely";
import { StoreUnavailableError } from "../transactions.ts";

// Named prepared statements: PostgreSQL parses and plans a statement once per connection
// instead of on every execution (the unnamed statement of the extended protocol is parsed
// and planned each time, which is most of the server's work for a primary-key lookup).
// Kysely's SQL text for one query shape is always the same, so the text names the statement.
// Texts that vary with their input (`in ($1, $2, ...)` lists, multi-row inserts) would each
// stay prepared on every connection: after MAX_NAMED distinct texts, further ones run unnamed.
const MAX_NAMED = 2_000;

/**
 * The statement names of one pool: created with it, dropped when it closes. Every
 * connection of the pool prepares a name at its first use of that text.
 */
export class StatementNames {
  readonly #names = new Map<string, string>();
  // Bumped when the server refuses a cached plan because a table changed under it (another
  // node migrated): every statement is then prepared afresh under a new name.
  #generation = 0;

  /** The name for `text`, or undefined when it runs unnamed (the cache is full). */
  nameOf(text: string): string | undefined {
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < MAX_NAMED) {
      name = `sigil_${this.#generation}_${createHash("sha1").update(text).digest("base64url")}`;
      this.#names.set(text, name);
    }
    return name;
  }

  /** A prepared plan went stale: the next statements are prepared again under new names. */
  renew(): void {
    this.#generation++;
    this.#names.clear();
  }

  get size(): number {
    return this.#names.size;
  }

  clear(): void {
    this.#names.clear();
  }
}

/** 0A000 "cached plan must not change result type": a prepared `select *` outlived a migration. */
function isStalePlan(e: unknown): boolean {
  return (e as { code?: unknown }).code === "0A000" && /cached plan must not change result type/.test(String((e as Error).message));
}

/** What a held-back BEGIN (or the COMMIT of a transaction that ran nothing) answers. */
const EMPTY_RESULT = { command: "", rowCount: 0, rows: [], fields: [] };

/** Hands Kysely pool clients whose queries cannot hang and whose failures are not reused. */
export function guardedPool(pool: pg.Pool, queryDeadlineMs: number, names: StatementNames): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapped = wrappers.get(client);
      if (!wrapped) wrappers.set(client, (wrapped = guardedClient(client, queryDeadlineMs, names)));
      return wrapped;
    },
    async end() {
      await pool.end();
      names.clear();
    },
  };
}

/**
 * BEGIN costs a round trip of its own. Held back instead, it goes with the transaction's first
 * statement when that one has no parameters — one simple-protocol message, "begin; <statement>",
 * whose last result is the statement's (docs/storage.md §3): the first statement of an
 * activity's transaction, the organization's row, is sent that way. A first statement with
 * parameters is preceded by the BEGIN as before; a transaction with no statement sends none.
 */
const BEGIN = /^\s*begin\s*;?\s*$/i;
const ENDS = /^\s*(commit|rollback)\s*;?\s*$/i;

function guardedClient(client: pg.PoolClient, deadlineMs: number, names: StatementNames): PostgresPoolClient {
  // Set when a query timed out during the current checkout.
  let broken: Error | undefined;
  // A BEGIN not sent yet (above).
  let beginHeld = false;
  const send = (text: string, values: unknown[] | undefined) => {
    // Statements without parameters (BEGIN, COMMIT, SAVEPOINT) go as simple queries: one message.
    const name = values && values.length > 0 ? names.nameOf(text) : undefined;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        broken = new StoreUnavailableError(`the database did not answer within ${deadlineMs} ms`);
        reject(broken);
        // The answer may still come, or never: the connection is in an unknown state and
        // is closed rather than reused (its late answer would go to the next query).
        (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      }, deadlineMs);
      const sent = name === undefined ? client.query(text, values) : client.query({ text, values, name });
      sent.then(
        (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        (e: unknown) => {
          clearTimeout(timer);
          // This statement fails (its transaction is aborted anyway); the next ones re-prepare.
          if (name !== undefined && isStalePlan(e)) names.renew();
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the driver's own error, passed on as it came
          reject(e);
        },
      );
    });
  };
  const query = async (text: unknown, params?: unknown) => {
    if (typeof text !== "string") {
      if (beginHeld) {
        beginHeld = false;
        await send("begin", undefined);
      }
      return client.query(text as never);
    }
    const values = params as unknown[] | undefined;
    if (BEGIN.test(text)) {
      beginHeld = true;
      return EMPTY_RESULT;
    }
    if (!beginHeld) return send(text, values);
    beginHeld = false;
    // A transaction that ran no statement: nothing to begin or end.
    if (ENDS.test(text)) return EMPTY_RESULT;
    if (values && values.length > 0) {
      await send("begin", undefined);
      return send(text, values);
    }
    // Two statements: node-postgres answers with one result per statement.
    const results = (await send(`begin; ${text}`, undefined)) as unknown[];
    return results[results.length - 1];
  };
  return {
    query: query as PostgresPoolClient["query"],
    release() {
      const err = broken;
      broken = undefined;
      beginHeld = false;
      // With an error the pool closes the client instead of keeping it.
      client.release(err);
    },
  };
}
