// The query pipeline: route, authenticate, validate — then read. No timestamp and no
// activity. A credential found in the target organization or an ancestor may read it:
// users read their own organization and every organization below it (§6.7: parents read
// their sub-organizations). As in submit.ts, nothing but organizationId is read from the
// body before the stamp is verified and the credential found.
import type { IncomingHttpHeaders } from "node:http";
import { notFound } from "../errors.ts";
import { queryAt } from "../queries/registry.ts";
import { resolveCredential, verifyStamp } from "./authenticate.ts";
import { parseJsonBody, refuseNulCharacters, targetOrganizationId } from "./body.ts";
import type { PipelineDeps } from "./submit.ts";

export async function runQuery(deps: PipelineDeps, op: string, raw: Buffer, headers: IncomingHttpHeaders): Promise<unknown> {
  const def = queryAt(op);
  if (!def) throw notFound(`unknown query operation ${JSON.stringify(op.slice(0, 100))}`);
  const now = (deps.now ?? Date.now)();
  const stamp = await verifyStamp(headers, raw);
  const body = parseJsonBody(raw);
  const auth = await resolveCredential(deps.db, stamp, targetOrganizationId(body), now);
  refuseNulCharacters(body);
  const req = def.validator.parse(body, "");
  return def.run({ db: deps.db, organization: auth.organization, actor: auth.actor, viewer: auth.user, now }, req);
}
