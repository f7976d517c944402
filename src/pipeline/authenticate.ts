// Step 2 of every pipeline: who signed this request? The stamp header chooses the strategy
// (auth/strategies.ts), which checks what it can over the raw bytes before the body is parsed
// or the store is read (the signature, or for a passkey its client data: docs/stamps.md §1.3);
// then the body is parsed (bounded nesting) and organizationId — the only field read before
// the caller is known — names where the credential is looked for (docs/request-path.md §2.3).
import { verifyStamp } from "../auth/strategies.ts";
import type { CredentialScope } from "../auth/credential-scope.ts";
import type { Principal } from "../auth/principal.ts";
import type { Rider } from "../auth/strategy.ts";
import { betweenSteps, parseJsonBody, targetOrganizationId } from "./body.ts";
import type { RequestContext } from "./context.ts";
import { enforceNetwork, withNetworkFacts } from "../network/enforce.ts";

export interface Authenticated<T> {
  principal: Principal;
  /** Parsed, not validated: nothing but organizationId has been looked at. */
  body: Record<string, unknown>;
  /** What the rider read with the credential (the request snapshot, for submissions). */
  rider: T;
  /** The credential's organization has no parent (a top-level organization, made by `sigil init`). */
  organizationIsRoot: boolean;
}

export async function authenticate<T>(ctx: RequestContext, scope: CredentialScope, rider: Rider<T>): Promise<Authenticated<T>> {
  const stamp = await verifyStamp(ctx.headers, ctx.raw, ctx.deps.logins);
  // A large body's steps are separate turns of the event loop (docs/network.md §6.1).
  await betweenSteps(ctx.raw);
  const body = parseJsonBody(ctx.raw);
  await betweenSteps(ctx.raw);
  const resolved = await stamp.resolve(
    ctx.deps.db,
    ctx.deps.state.chains,
    targetOrganizationId(body),
    scope,
    ctx.now,
    withNetworkFacts(rider),
    { cache: ctx.deps.state.credentials, since: ctx.arrived },
  );
  // IP allowlist and the caller's rate limits: before validation and policy (network/enforce.ts).
  const pending = enforceNetwork(ctx.deps.db, ctx.deps.state.allowlists, ctx.network, resolved.principal, resolved.rider.network);
  if (pending) await pending;
  return { principal: resolved.principal, body, rider: resolved.rider.inner, organizationIsRoot: resolved.rider.network.isRoot };
}
