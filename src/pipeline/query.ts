// The query pipeline (docs/request-path.md §4): route, authenticate, validate — then read. No
// timestamp, no request snapshot (whoami costs one statement) and no activity. A credential
// found in the target organization or an ancestor may read it: users read their own
// organization and every organization below it (parents read their sub-organizations,
// docs/request-path.md §5); whoami also finds a credential below the target
// (docs/stamps.md §5.2). As in submit.ts, nothing but organizationId is read from the body
// before the stamp is verified and the credential found.
import type { IncomingHttpHeaders } from "node:http";
import { notFound } from "../errors.ts";
import { queryAt } from "../queries/registry.ts";
import { NO_RIDER } from "../auth/strategy.ts";
import { authenticate } from "./authenticate.ts";
import { refuseUnstorableCharacters } from "./body.ts";
import { refuseUnsignableRoute } from "../auth/strategies.ts";
import { refuseOutsideProxyScope } from "../auth-proxy/scope.ts";
import { requestContext } from "./context.ts";
import type { RequestNetwork } from "../network/request-network.ts";
import type { PipelineDeps } from "./deps.ts";
import { stampCredential } from "./authorize.ts";

export async function runQuery(
  deps: PipelineDeps,
  op: string,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  network?: RequestNetwork,
): Promise<unknown> {
  const def = queryAt(op);
  if (!def) throw notFound(`unknown query operation ${JSON.stringify(op.slice(0, 100))}`);
  const ctx = requestContext(deps, op, raw, headers, network);
  const { principal, body } = await authenticate(ctx, def.credentialScope, NO_RIDER);
  // A stamp kind restricted to some activities signs no query (docs/stamps.md §4.4).
  refuseUnsignableRoute(principal, undefined);
  // The auth proxy's key reads only what the proxy looks up (docs/auth-proxy.md §3).
  refuseOutsideProxyScope(principal, { query: def.op });
  refuseUnstorableCharacters(body);
  const req = def.validator.parse(body, "");
  return def.run(
    {
      db: deps.db,
      state: deps.state,
      organization: principal.organization,
      actor: principal.actor,
      viewer: principal.user,
      now: ctx.now,
      ...(deps.logins ? { logins: deps.logins } : {}),
      ...(principal.credential.authProxy ? { byAuthProxy: true } : {}),
      credential: stampCredential(principal),
    },
    req,
  );
}
