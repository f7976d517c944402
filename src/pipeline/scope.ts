// Operator gates (docs/request-path.md §2.4): an activity whose definition declares a `scope`
// belongs to top-level organizations only (the ones `sigil init` makes), and may be off until
// the operator enables it. Checked here, for every such activity alike: at validation, before
// its parameters or any policy are looked at, and again in the transaction that executes it
// (an activity may run on a later approval, after the operator changed the service).
import type { ActivityScope, CompiledActivity, ExecuteContext } from "../activities/define.ts";
import { organizationChain } from "../store/organizations.ts";

/** What an operator may switch on or off, as the gates read it. */
export interface ScopeEnv {
  /** SIGIL_TVC_IMAGE_ROOT; undefined: TVC is off. */
  tvcImageRoot?: string;
}

const enabled = (scope: ActivityScope, env: ScopeEnv): boolean => scope.enabled?.(env) ?? true;

/**
 * Validation step. `organizationIsRoot` is about the credential's organization; a parent's
 * credential (`fromAncestor`) is refused even where parent-writes.ts would let it through, so
 * the two rules cannot drift apart.
 */
export function refuseOutsideScope(
  def: Pick<CompiledActivity, "scope">,
  who: { fromAncestor: boolean; organizationId: string },
  organizationIsRoot: boolean,
  env: ScopeEnv,
): void {
  const { scope } = def;
  if (!scope) return;
  if (!enabled(scope, env) || who.fromAncestor || !organizationIsRoot) throw scope.refusal(who.organizationId);
}

/** The same rule inside the executing transaction: the target organization has no parent. */
export async function refuseOutsideScopeAtExecution(
  def: Pick<CompiledActivity, "scope">,
  ctx: Pick<ExecuteContext<unknown>, "tx" | "organization" | "chains">,
  env: ScopeEnv,
): Promise<void> {
  const { scope } = def;
  if (!scope) return;
  if (!enabled(scope, env)) throw scope.refusal(ctx.organization.id);
  const chain = await organizationChain(ctx.tx, ctx.organization.id, ctx.chains);
  if (chain.length !== 1) throw scope.refusal(ctx.organization.id);
}
