// PostgreSQL's credential epoch (docs/storage.md §3.1): a connection of its own LISTENs on
// CREDENTIAL_CHANNEL, which migration 027's row triggers NOTIFY in every transaction that
// writes a credential-bearing row, from any node or process; each notice moves the epoch.
//
// A notice travels on its own: it may reach this process after a request that was sent once
// the change had committed. So an epoch is only handed out after a round trip on the
// listening connection that started after the request arrived: the server signals every
// listening session when the notifying transaction commits (before its client hears of the
// commit), and a session delivers what it was signalled before answering the next query, so
// by the reply every change committed before the round trip started has moved the epoch. One
// round trip serves every request that arrived before it was sent.
//
// While the connection is down (and until it listens again) there is no epoch: every look-up
// reads the store. Each (re)connection moves the epoch, since notices may have been missed.
import pg from "pg";
import { CREDENTIAL_CHANNEL, type CredentialWatch } from "../credential-watch.ts";

/** A round trip on the listening connection slower than this counts as none: read the store. [our choice] */
const SYNC_TIMEOUT_MS = 2_000;
/** How the listening connection names itself in pg_stat_activity. */
export const WATCH_APPLICATION_NAME = "sigil credential watch";
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

interface Sync {
  /** performance.now() when it was sent. */
  sentAt: number;
  done: Promise<number | undefined>;
}

export function postgresCredentialWatch(connectionString: string): CredentialWatch {
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let started = false;
  let epoch = 1;
  let retryMs = FIRST_RETRY_MS;
  let timer: NodeJS.Timeout | undefined;
  /** The last round trip that answered while listening: when it was sent, and the epoch after it. */
  let confirmed: { sentAt: number; epoch: number } | undefined;
  let inFlight: Sync | undefined;
  /** Requests that arrived after the round trip in flight was sent: they wait for the next one. */
  let queued: Promise<number | undefined> | undefined;

  /** `c` is gone (error, end, a round trip failed or timed out): forget it and connect again later. */
  const lost = (c: pg.Client) => {
    if (closed || client !== c) return;
    listening = false;
    confirmed = undefined;
    epoch++;
    client = undefined;
    c.removeAllListeners();
    c.on("error", () => {}); // a late error on a dropped client must not crash the process
    void c.end().catch(() => {});
    timer = setTimeout(() => void connect(), retryMs); // connect() catches its own failures
    timer.unref();
    retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client({ connectionString, keepAlive: true, application_name: WATCH_APPLICATION_NAME });
    client = c;
    c.on("error", () => lost(c));
    c.on("end", () => lost(c));
    c.on("notification", () => epoch++);
    try {
      await c.connect();
      await c.query(`LISTEN ${CREDENTIAL_CHANNEL}`);
      if (closed || client !== c) return;
      epoch++;
      listening = true;
      retryMs = FIRST_RETRY_MS;
    } catch {
      lost(c);
    }
  }

  /** One round trip on the listening connection; the epoch after it, or undefined. */
  function sync(): Sync {
    const c = client;
    const sentAt = performance.now();
    if (!c || !listening) return { sentAt, done: Promise.resolve(undefined) };
    let deadline: NodeJS.Timeout | undefined;
    const done = Promise.race([
      c.query("SELECT 1").then(
        () => {
          if (client !== c || !listening) return undefined;
          if (!confirmed || confirmed.sentAt < sentAt) confirmed = { sentAt, epoch };
          return epoch;
        },
        () => {
          lost(c);
          return undefined;
        },
      ),
      new Promise<undefined>((resolve) => {
        deadline = setTimeout(() => {
          // The connection answers nothing: treat it as lost (a fresh one will LISTEN again).
          lost(c);
          resolve(undefined);
        }, SYNC_TIMEOUT_MS);
        deadline.unref();
      }),
    ]).finally(() => clearTimeout(deadline));
    return { sentAt, done };
  }

  function next(): Promise<number | undefined> {
    const s = sync();
    inFlight = s;
    void s.done.finally(() => {
      if (inFlight === s) inFlight = undefined;
    });
    return s.done;
  }

  return {
    epoch(since) {
      if (!started) {
        started = true;
        void connect();
      }
      if (!listening) return undefined;
      // An answer to a round trip sent after the request arrived: nothing newer to wait for.
      if (confirmed && confirmed.sentAt > since) return epoch;
      if (inFlight && inFlight.sentAt > since) return inFlight.done;
      if (!inFlight) return next();
      // The round trip in flight may have been sent before this request arrived: the next one.
      // (One started meanwhile by another request was sent after this one arrived: it will do.)
      return (queued ??= inFlight.done.then(() => {
        queued = undefined;
        return inFlight ? inFlight.done : next();
      }));
    },
    current: () => (listening ? epoch : undefined),
    async close() {
      closed = true;
      listening = false;
      if (timer) clearTimeout(timer);
      const c = client;
      client = undefined;
      c?.removeAllListeners();
      c?.on("error", () => {});
      await c?.end().catch(() => {});
    },
  };
}
