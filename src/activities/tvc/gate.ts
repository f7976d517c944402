// Who may use TVC at all (docs/tvc-isolation.md §1): TVC runs code on the service's host, so it
// is an operator feature. It is on only when the operator named an image root
// (SIGIL_TVC_IMAGE_ROOT), and then only for top-level organizations — the ones `sigil init`
// makes, with no parent. Sub-organizations are end users (treat as hostile) and never reach it.
//
// The check runs in the submit pipeline right after authentication and the parent-write check,
// before parameters are validated or any policy is consulted (pipeline/validate.ts): a refused
// request gets 403 and leaves nothing behind — no activity, no vote, no awaiting-consensus
// record that could run later. Each TVC handler checks again when it executes
// (tvcAllowedAtExecution), for activities that were waiting for approvals when the operator
// switched TVC off, or that were submitted before these rules existed.
import fs from "node:fs/promises";
import path from "node:path";
import { invalid, permissionDenied, type ApiError } from "../../errors.ts";
import { isWithin } from "../../config.ts";
import { organizationChain } from "../../store/organizations.ts";
import type { ExecuteContext } from "../define.ts";

/** The policy resources of the TVC activities: every one of them is gated. */
export const TVC_RESOURCES: ReadonlySet<string> = new Set(["TVC_APP", "TVC_DEPLOYMENT"]);

export const isTvcActivity = (def: { resource: string }): boolean => TVC_RESOURCES.has(def.resource);

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

/**
 * Pipeline step (pipeline/validate.ts). `organizationIsRoot` is about the credential's
 * organization; a credential of a parent never gets here for a TVC type (parent-writes.ts),
 * and `fromAncestor` is checked again so the two cannot drift apart.
 */
export function refuseTvc(def: { resource: string }, who: { fromAncestor: boolean; organizationId: string }, organizationIsRoot: boolean, imageRoot: string | undefined): void {
  if (!isTvcActivity(def)) return;
  if (!imageRoot || who.fromAncestor || !organizationIsRoot) throw tvcNotEnabled(who.organizationId);
}

/** The same rule inside a TVC handler's transaction (see the file comment). */
export async function tvcAllowedAtExecution(ctx: ExecuteContext): Promise<void> {
  const chain = await organizationChain(ctx.tx, ctx.organization.id, ctx.chains);
  if (!ctx.services.tvcImageRoot || chain.length !== 1) throw tvcNotEnabled(ctx.organization.id);
}

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
