// The request body, in the order the pipelines may look at it: the stamp is verified over
// the raw bytes first (authenticate.ts); then the bytes are parsed (bounded nesting); then
// only `organizationId` is read, to find the credential; everything else is validated once
// the caller is known.
import { invalid } from "../errors.ts";
import { UUID_PATTERN } from "../schemas/common.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../schemas/json-depth.ts";
import { unstorableCharacters } from "../schemas/unstorable-characters.ts";

/** The request body as a JSON object, or a 400 saying what is wrong with it. */
export function parseJsonBody(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) throw invalid("bad request body: empty; expected a JSON object");
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) {
    throw invalid(`bad request body: JSON nested more than ${MAX_JSON_DEPTH} levels deep`, [
      { field: "body", description: `objects and arrays may nest at most ${MAX_JSON_DEPTH} levels deep` },
    ]);
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw invalid(`bad request body: malformed JSON (${(err as Error).message.slice(0, 120)})`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalid("bad request body: expected a JSON object");
  }
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
  const violations = unstorableCharacters(body);
  if (violations.length === 0) return;
  throw invalid(`bad request body: ${violations[0]!.field} ${violations[0]!.description}`, violations);
}
