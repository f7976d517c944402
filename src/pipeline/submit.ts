// The submit pipeline: every state change goes through here, in this order
// (docs/request-path.md §2).
//   1. route: the path's operation → its definitions (no body read yet)
//   2. authenticate: the stamp's strategy checks it over the raw bytes; then — the body
//      parsed with bounded nesting and only organizationId read — the credential is found
//      in the target organization or an ancestor, or for login types below the target
//      (authenticate.ts, auth/credential-scope.ts), and the request snapshot is read with it
//      (snapshot.ts); then the IP allowlist and rate limits (network/enforce.ts)
//   3. validate: body.type → definition; a parent's credential may not write; no U+0000;
//      envelope + parameters; the route kind's own checks (validate.ts)
//   4. liveness of timestampMs (validate.ts)
//   then the steps of the definition's route kind (routes.ts): for a new activity
//   idempotency → authorize → settle → respond (submission.ts); for a vote
//   lock target → authorize → settle → respond (vote.ts).
import type { IncomingHttpHeaders } from "node:http";
import { notFound } from "../errors.ts";
import { ACTIVITIES, activitiesAt, VOTES } from "../activities/registry.ts";
import type { RouteDefinitions, RouteKind } from "../activities/define.ts";
import type { CredentialScope } from "../auth/credential-scope.ts";
import type { RequestNetwork } from "../network/request-network.ts";
import { authenticate, type Authenticated } from "./authenticate.ts";
import { requestContext, type RequestContext } from "./context.ts";
import { requestSnapshot, type RequestSnapshot } from "./snapshot.ts";
import type { PipelineDeps } from "./deps.ts";
import type { Answer } from "./respond.ts";
import { ROUTE_KINDS } from "./routes.ts";
import { routeType, validate } from "./validate.ts";

/**
 * Where each operation's credential may be found. It is chosen from the path alone (the
 * body's type is read only once the caller is known), so the definitions sharing an
 * operation must agree on it.
 */
const scopeByOp = new Map<string, CredentialScope>();
for (const def of [...ACTIVITIES, ...VOTES]) {
  const scope = (def.route === "activity" ? def.credentialScope : undefined) ?? ROUTE_KINDS[def.route].credentialScope;
  if ((scopeByOp.get(def.op) ?? scope) !== scope)
    throw new Error(`submit/${def.op}: its definitions disagree on where credentials are found`);
  scopeByOp.set(def.op, scope);
}

export async function submitActivity(
  deps: PipelineDeps,
  op: string,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  network?: RequestNetwork,
): Promise<Answer> {
  const ctx = requestContext(deps, op, raw, headers, network);
  const defs = activitiesAt(op);
  const scope = scopeByOp.get(op);
  if (!defs || !scope) throw notFound(`unknown activity operation ${JSON.stringify(op.slice(0, 100))}`);
  const authenticated = await authenticate(ctx, scope, requestSnapshot);
  const def = routeType(defs, authenticated.body.type, op);
  return runRoute(ctx, authenticated, def.route, def);
}

/** Validation, then the steps of the definition's route kind. */
function runRoute<K extends RouteKind>(
  ctx: RequestContext,
  authenticated: Authenticated<RequestSnapshot>,
  kind: K,
  def: RouteDefinitions[K],
): Promise<Answer> {
  const steps = ROUTE_KINDS[kind];
  return steps.run(validate(ctx, authenticated, def, steps.check));
}

export type { PipelineDeps } from "./deps.ts";
