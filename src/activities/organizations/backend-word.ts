// Whose word a sign-up is (docs/login-lookups.md §1): the app's backend vouches for what it
// writes into its own sub-organizations only through its own credentials. A sub-organization
// creating sub-organizations below itself is a tenant; the auth proxy's key signs what a
// browser sent (docs/auth-proxy.md §2) — neither vouches for contacts, nor makes the keys it
// registers trusted (docs/login-lookups.md §3).
import { isAuthProxyCredential } from "../../store/auth-proxy-configs.ts";
import { stampKeyOf } from "../verification-tokens.ts";
import type { ExecuteContext } from "../define.ts";

/**
 * True when the activity was submitted in a top-level organization (`depth` 1: the chain of
 * the organization it runs in) by one of its own credentials other than an auth proxy's.
 */
export async function writtenByBackend(ctx: ExecuteContext, depth: number): Promise<boolean> {
  if (depth !== 1) return false;
  return !(await isAuthProxyCredential(ctx.tx, ctx.actor.userId, await stampKeyOf(ctx)));
}
