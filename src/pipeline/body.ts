import { invalid } from "../errors.ts";

/** The request body as a JSON object, or a 400 saying what is wrong with it. */
export function parseJsonBody(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) throw invalid("bad request body: empty; expected a JSON object");
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
