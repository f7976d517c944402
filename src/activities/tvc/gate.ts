// Who may use TVC at all (docs/tvc-isolation.md §1): TVC runs code on the service's host, so it
// is an operator feature. It is on only when the operator named an image root
// (SIGIL_TVC_IMAGE_ROOT), and then only for top-level organizations — the ones `sigil init`
// makes, with no parent. Sub-organizations are end users (treat as hostile) and never reach it.
//
// Every TVC definition declares TVC_SCOPE; the pipeline checks it (pipeline/scope.ts) right after
// authentication and the parent-write check, before parameters are validated or any policy is
// consulted: a refused request gets 403 and leaves nothing behind — no activity, no vote, no
// awaiting-consensus record that could run later. It checks again in the transaction that
// executes the activity, for activities that were waiting for approvals when the operator
// switched TVC off, or that were submitted before these rules existed.
import fs from "node:fs/promises";
import path from "node:path";
import { invalid, permissionDenied, type ApiError } from "../../errors.ts";
import { isWithin } from "../../config.ts";
import type { ActivityScope } from "../define.ts";

/**
 * The one refusal, whatever the reason (TVC off, or a sub-organization): the caller learns
 * neither whether the operator configured TVC nor anything about the host.
 */
export function tvcNotEnabled(organizationId: string): ApiError {
  return permissionDenied(
    `TVC is not enabled for organization ${organizationId}: TVC apps, deployments and approvals are an operator feature, ` +
      "available only to top-level organizations of a service whose operator enabled TVC",
  );
}

/** The scope of every TVC activity: top-level organizations, once the operator named an image root. */
export const TVC_SCOPE: ActivityScope = {
  only: "top-level",
  enabled: (env) => Boolean(env.tvcImageRoot),
  refusal: tvcNotEnabled,
};

const FIELD = "parameters.pivotContainerImageUrl";

/**
 * The image directory must lie under the image root once links are resolved
 * (docs/tvc-isolation.md §2). The directory need not exist yet (the operator may copy the image
 * before the approvals come in): its deepest existing ancestor is resolved and the rest
 * appended, so a link inside the root that leads out is refused now, and the runtime resolves
 * the whole path again before every start.
 */
export async function checkImageUnderRoot(dir: string, imageRoot: string): Promise<void> {
  let existing = path.resolve(dir);
  const rest: string[] = [];
  let real: string | undefined;
  for (;;) {
    try {
      real = await fs.realpath(existing);
      break;
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) break;
      rest.unshift(path.basename(existing));
      existing = parent;
    }
  }
  const resolved = real === undefined ? undefined : path.join(real, ...rest);
  if (resolved === undefined || !isWithin(imageRoot, resolved)) {
    const description = "must name a directory under the TVC image root the operator configured (SIGIL_TVC_IMAGE_ROOT), links resolved";
    throw invalid(`${FIELD}: ${description}`, [{ field: FIELD, description }]);
  }
}
