// The query pipeline: route, validate, authenticate — then read. No timestamp and no
// activity. A credential found in the target organization or an ancestor may read it:
// users read their own organization and every organization below it.
import type { IncomingHttpHeaders } from "node:http";
import { notFound } from "../errors.ts";
import { queryAt } from "../queries/registry.ts";
import { authenticate } from "./authenticate.ts";
import { parseJsonBody } from "./body.ts";
import type { PipelineDeps } from "./submit.ts";

export async function runQuery(deps: PipelineDeps, op: string, raw: Buffer, headers: IncomingHttpHeaders): Promise<unknown> {
  const def = queryAt(op);
  if (!def) throw notFound(`unknown query operation ${JSON.stringify(op.slice(0, 100))}`);
  const body = parseJsonBody(raw);
  const req = def.validator.parse(body, "") as { organizationId: string };
  const now = (deps.now ?? Date.now)();
  const auth = await authenticate(deps.db, headers, raw, req.organizationId, now);
  return def.run({ db: deps.db, organization: auth.organization, actor: auth.actor, viewer: auth.user, now }, req);
}
