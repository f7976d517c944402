// The authentication strategies, chosen by stamp header: a request carries exactly one
// (docs/stamps.md §1.1). STRATEGIES is the one list of stamp kinds, and everything that depends
// on the kind reads it (docs/stamps.md §7): the header choice and the SIGNATURE_MISSING text
// below, the CORS header list (server/app.ts hands it to network/cors.ts), the log redaction
// (cli/serve.ts), the rate-limit and allowlist keys (network/enforce.ts) and the routes a kind
// may sign (pipeline/validate.ts, pipeline/query.ts).
import type { IncomingHttpHeaders } from "node:http";
import { unauthenticated } from "../errors.ts";
import { apiKeyStamps } from "./api-key-stamp.ts";
import { webauthnStamps } from "./webauthn-stamp.ts";
import type { LoginSettings } from "../logins/settings.ts";
import { attestedStamps } from "./attested-stamp.ts";
import { readOnlySessions } from "./read-only-session.ts";
import type { Principal } from "./principal.ts";
import type { StampStrategy, VerifiedStamp } from "./strategy.ts";

/**
 * In the order errors name them (and CORS lists them). Adding a stamp kind = its strategy +
 * one line here.
 */
export const STRATEGIES: readonly StampStrategy[] = [apiKeyStamps, webauthnStamps, attestedStamps, readOnlySessions];

/** Strategies by the credential kind of the principals they resolve. */
const BY_KIND = new Map<string, StampStrategy>();
for (const s of STRATEGIES) {
  // Two strategies on one header could not be told apart; two on one kind would share
  // rate-limit buckets and route rules by accident. Either is a programming error: fail at load.
  if (STRATEGIES.filter((o) => o.header === s.header).length > 1) throw new Error(`two stamp strategies read the header ${s.header}`);
  if (s.header !== s.header.toLowerCase() || s.header !== s.headerName.toLowerCase())
    throw new Error(`stamp header ${s.headerName}: header must be its lower-case name`);
  if (BY_KIND.has(s.credentialKind)) throw new Error(`two stamp strategies resolve credential kind ${s.credentialKind}`);
  BY_KIND.set(s.credentialKind, s);
}

/** Every stamp header, lower-case, in list order: what CORS allows and the logs redact. */
export const STAMP_HEADERS: readonly string[] = STRATEGIES.map((s) => s.header);

/** The SIGNATURE_MISSING text; its wording is upstream's (docs/stamps.md §1.1). */
const MISSING_MESSAGE = `cannot authenticate public API request without a stamp (${STRATEGIES.filter((s) => s.namedWhenMissing)
  .map((s) => s.headerName)
  .join("/")} header)`;

function chooseStrategy(headers: IncomingHttpHeaders): { strategy: StampStrategy; value: string | string[] } {
  const present = STRATEGIES.filter((s) => headers[s.header] !== undefined);
  if (present.length === 0) throw unauthenticated("SIGNATURE_MISSING", MISSING_MESSAGE);
  if (present.length > 1) {
    throw unauthenticated("UNAUTHENTICATED", `exactly one stamp header is allowed, got ${present.map((s) => s.header).join(", ")}`);
  }
  const strategy = present[0]!;
  return { strategy, value: headers[strategy.header]! };
}

/** The request's stamp, its signature verified over the raw body; to be resolved to a Principal. */
export async function verifyStamp(headers: IncomingHttpHeaders, rawBody: Buffer, logins?: LoginSettings): Promise<VerifiedStamp> {
  const { strategy, value } = chooseStrategy(headers);
  return strategy.verify(value, rawBody, logins);
}

/** The strategy that resolved this principal. */
export function strategyOf(principal: Principal): StampStrategy {
  const s = BY_KIND.get(principal.credential.kind);
  // Every principal comes from a strategy in the list: anything else is a programming error.
  if (!s) throw new Error(`no stamp strategy resolves credential kind ${principal.credential.kind}`);
  return s;
}

/**
 * Throws the kind's refusal unless its stamp may sign this route: `type` is the activity type
 * of a submission, undefined for a query (docs/stamps.md §4.4).
 */
export function refuseUnsignableRoute(principal: Principal, type: string | undefined): void {
  const { signs } = strategyOf(principal);
  if (signs === "any") return;
  if (type === undefined ? signs.queries !== true : !signs.activityTypes.includes(type)) throw signs.refusal();
}
