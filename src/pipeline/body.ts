// The request body, in the order the pipelines may look at it: the stamp is verified over
// the raw bytes first (authenticate.ts); then the bytes are parsed (bounded nesting, members
// and values: docs/network.md §6.2); then
// only `organizationId` is read, to find the credential; everything else is validated once
// the caller is known.
import { invalid } from "../errors.ts";
import { UUID_PATTERN } from "../schemas/common.ts";
import { JSON_LIMITS, exceededJsonLimit, type JsonLimits } from "../schemas/json-shape.ts";
import { unstorableCharacters } from "../schemas/unstorable-characters.ts";
import type { ReceivedFacts } from "./body-stream.ts";

const SHAPE_PROBLEMS: Record<keyof JsonLimits, (n: string) => [message: string, description: string]> = {
  depth: (n) => [`JSON nested more than ${n} levels deep`, `objects and arrays may nest at most ${n} levels deep`],
  members: (n) => [`JSON holds more than ${n} object members`, `may hold at most ${n} object members in all`],
  values: (n) => [`JSON holds more than ${n} values`, `may hold at most ${n} values (objects, arrays, members and elements) in all`],
};

// Only a `\u` escape can put U+0000 or a lone surrogate in a parsed string: JSON.parse refuses
// raw control characters, and the UTF-8 decoder turns encoded surrogates into U+FFFD. A body
// whose text has no such escape (nearly every one) skips the walk over its values; one that
// has any is walked, at a cost bounded by the value limit (docs/network.md §6.3).
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;
const withoutUnstorableEscapes = new WeakSet<object>();

/**
 * From this size on, a request hands the event loop back between the steps that each pass
 * over its whole body — the stamp's hash, the shape scan and JSON.parse, the store write, the
 * answer that carries the body back as the vote's message — so that other tenants' requests
 * are served in between (docs/network.md §6.1). Below it every step is well under a
 * millisecond and yielding would only add latency. [our choice]
 */
export const LARGE_BODY_BYTES = 64 * 1024;
/** Lets the event loop run what else is ready (other tenants' requests) before going on. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A turn of the event loop for a large body (LARGE_BODY_BYTES), nothing for others. */
export function betweenSteps(raw: Buffer): Promise<void> | undefined {
  return raw.length >= LARGE_BODY_BYTES ? nextTurn() : undefined;
}

/**
 * What the HTTP reader found out about a large body while it arrived (./body-stream.ts,
 * src/server/plugins/raw-body.ts): parseJsonBody then only parses. Keyed by the body's own
 * buffer, so it goes with the bytes and never outlives them.
 */
const received = new WeakMap<Buffer, ReceivedFacts>();

/** Notes what was learnt of `raw` as it arrived; parseJsonBody reads it instead of passing over the bytes again. */
export function noteReceived(raw: Buffer, facts: ReceivedFacts): void {
  received.set(raw, facts);
}

/** The request body as a JSON object, or a 400 saying what is wrong with it. */
export function parseJsonBody(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) throw invalid("bad request body: empty; expected a JSON object");
  const known = received.get(raw);
  const exceeded = known ? known.exceeded : exceededJsonLimit(raw);
  if (exceeded) {
    const [message, description] = SHAPE_PROBLEMS[exceeded](JSON_LIMITS[exceeded].toLocaleString("en-US"));
    throw invalid(`bad request body: ${message}`, [{ field: "body", description }]);
  }
  const text = known?.text ?? raw.toString("utf8");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw invalid(`bad request body: malformed JSON (${(err as Error).message.slice(0, 120)})`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid("bad request body: expected a JSON object");
  }
  if (!(known ? known.unstorableEscape : UNSTORABLE_ESCAPE.test(text))) withoutUnstorableEscapes.add(body);
  return body as Record<string, unknown>;
}

const UUID = new RegExp(UUID_PATTERN);
const ORGANIZATION_ID_PROBLEM = "must be an organization id (UUID)";

/**
 * The one field read before the caller is known: the organization whose credentials (and
 * whose ancestors' credentials) may sign. Only its syntax is checked here; whether it
 * exists is never said to a caller who is not a user of it or of an ancestor.
 */
export function targetOrganizationId(body: Record<string, unknown>): string {
  const id = Object.hasOwn(body, "organizationId") ? body.organizationId : undefined;
  if (typeof id === "string" && UUID.test(id)) return id;
  const description = id === undefined ? "must be set" : ORGANIZATION_ID_PROBLEM;
  throw invalid(`bad request body: organizationId ${description}`, [{ field: "organizationId", description }]);
}

/** 400 naming every field (and field name) that holds U+0000 or an unpaired surrogate (docs/network.md §6.3). */
export function refuseUnstorableCharacters(body: Record<string, unknown>): void {
  if (withoutUnstorableEscapes.has(body)) return;
  const violations = unstorableCharacters(body);
  if (violations.length === 0) return;
  throw invalid(`bad request body: ${violations[0]!.field} ${violations[0]!.description}`, violations);
}
