// Steps 3 and 4 of the submit pipeline, once the caller is known: body.type → definition; a
// parent's credential may not write (parent-writes.ts); no U+0000 anywhere; the envelope and
// the parameters against the definition's schema (unknown keys in parameters are dropped),
// then the route kind's own checks (policy expressions); and the liveness of timestampMs.
import { Type, type Static, type TObject } from "@sinclair/typebox";
import { invalid } from "../errors.ts";
import { compile } from "../schemas/validate.ts";
import { OrganizationId, UintString } from "../schemas/common.ts";
import type { SubmitRoute } from "../activities/define.ts";
import type { Principal } from "../auth/principal.ts";
import { refuseUnstorableCharacters } from "./body.ts";
import { refuseParentWrite } from "./parent-writes.ts";
import { refuseOutsideScope } from "./scope.ts";
import { refuseOutsideProxyScope } from "../auth-proxy/scope.ts";
import { refuseUnsignableRoute } from "../auth/strategies.ts";
import type { RequestContext } from "./context.ts";
import type { Authenticated } from "./authenticate.ts";
import type { RequestSnapshot } from "./snapshot.ts";

const envelope = compile(
  Type.Object({
    type: Type.String({ minLength: 1, maxLength: 128 }),
    timestampMs: UintString("timestampMs"),
    organizationId: OrganizationId,
    parameters: Type.Object({}, { errorMessage: "must be an object" }),
    generateAppProofs: Type.Optional(Type.Boolean()),
  }),
);

export type Envelope = Static<typeof envelope.schema>;
export type Params = Static<TObject>;

/** A submission ready for its route kind's steps: caller known, request valid and live. */
export interface Validated<D extends SubmitRoute = SubmitRoute> {
  ctx: RequestContext;
  principal: Principal;
  snapshot: RequestSnapshot;
  def: D;
  envelope: Envelope;
  params: Params;
}

/** The definition accepted at submit/<op> for the body's type, or a 400 listing the accepted ones. */
export function routeType(defs: ReadonlyMap<string, SubmitRoute>, type: unknown, op: string): SubmitRoute {
  const def = typeof type === "string" ? defs.get(type) : undefined;
  if (def) return def;
  const accepted = [...defs.keys()].join(", ");
  const given =
    type === undefined ? "type must be set" : `activity type ${JSON.stringify(type).slice(0, 200)} is not accepted at submit/${op}`;
  throw invalid(`bad request body: ${given}; expected ${accepted}`, [{ field: "type", description: `must be one of ${accepted}` }]);
}

/** Everything about the request that can be judged without the store. */
export function validate<D extends SubmitRoute>(
  ctx: RequestContext,
  { principal, body, rider: snapshot, organizationIsRoot }: Authenticated<RequestSnapshot>,
  def: D,
  /** The route kind's checks beyond the schema, run before liveness (routes.ts). */
  check: (def: D, params: Params) => void,
): Validated<D> {
  refuseParentWrite(def, principal);
  // Operator gates (TVC, docs/tvc-isolation.md §1; the auth proxy, docs/auth-proxy.md §2): the
  // definition's scope, refused before parameters or policies are looked at.
  if (def.route === "activity")
    refuseOutsideScope(
      def,
      { fromAncestor: principal.fromAncestor, organizationId: principal.organization.id },
      organizationIsRoot,
      ctx.deps,
    );
  // Some stamp kinds may sign only some activities (attested: stamp_login, docs/stamps.md §4.4).
  refuseUnsignableRoute(principal, def.type);
  // The auth proxy's key signs only what the proxy forwards, votes never (docs/auth-proxy.md §3).
  refuseOutsideProxyScope(principal, { activityType: def.type });
  refuseUnstorableCharacters(body);
  const env = envelope.parse(body, "");
  // The envelope schema knows nothing of parameters (cleaning drops them): read them raw.
  const params = def.validator.parse(body.parameters, "parameters");
  check(def, params);
  refuseStale(ctx, Number(env.timestampMs));
  return { ctx, principal, snapshot, def, envelope: env, params };
}

/** Liveness: timestampMs within the configured window around server time. */
function refuseStale({ deps, now }: RequestContext, ts: number): void {
  if (ts >= now - deps.timestampMaxAgeMs && ts <= now + deps.timestampMaxFutureMs) return;
  throw invalid(
    `timestampMs is outside the accepted window (${deps.timestampMaxAgeMs / 1000} s old to ${deps.timestampMaxFutureMs / 1000} s ahead of server time ${now})`,
    [{ field: "timestampMs", description: "must be the current time in milliseconds" }],
  );
}
