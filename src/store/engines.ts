// The storage engines, as one list (docs/storage.md §1): the URL picks the engine at startup,
// a database handle names its dialect, and an error is judged by the engines' own taxonomies.
// Adding an engine is one folder and one line here (docs/storage.md §2).
import type { Kysely } from "kysely";
import type { StoreDialect } from "./dialect.ts";
import { unavailableBy, type StorageEngine } from "./engine.ts";
import { sqlite } from "./sqlite/index.ts";
import { postgres } from "./postgres/index.ts";

export const ENGINES = [sqlite, postgres] as const;

/** An engine's name ("sqlite", "postgres"). */
export type Engine = (typeof ENGINES)[number]["name"];

/** What DATABASE_URL may look like, for messages. */
function accepted(): string {
  const schemes = ENGINES.flatMap((e) => e.schemes.map((s) => `${s}//`));
  const without = ENGINES.filter((e) => e.matches(undefined)).map((e) => e.name);
  return `${schemes.join(", ")}${without.length ? `; or no DATABASE_URL at all for ${without.join(", ")}` : ""}`;
}

/** The engine serving `url` (undefined: no DATABASE_URL). Throws, naming the schemes, when none does. */
export function engineFor(url: string | undefined, engines: readonly StorageEngine[] = ENGINES): StorageEngine<Engine> {
  const found = engines.find((e) => e.matches(url));
  if (!found) {
    const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(url ?? "")?.[1];
    throw new Error(`DATABASE_URL: ${scheme ? `unknown scheme ${JSON.stringify(scheme)}` : "not a URL"}; expected ${accepted()}`);
  }
  return found as StorageEngine<Engine>;
}

/** The dialect of a database handle or of a transaction on it; throws for a handle no engine opened. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a handle on any schema: only its adapter is read
export function dialectOf(db: Kysely<any>): StoreDialect {
  const adapter = db.getExecutor().adapter;
  const engine = ENGINES.find((e) => e.dialect.ownsAdapter(adapter));
  if (!engine) throw new Error(`dialectOf: no storage engine in src/store/engines.ts owns the Kysely adapter ${adapter.constructor.name}`);
  return engine.dialect;
}

/**
 * Whether `err` (or an error it wraps) says the store cannot serve right now — 503, retried
 * by clients — rather than a bug (500). Each engine judges its own errors.
 */
export const isStoreUnavailable: (err: unknown) => boolean = unavailableBy((e) => ENGINES.some((engine) => engine.isUnavailable(e)));
