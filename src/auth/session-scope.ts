// The scope of a session issued with a session profile (docs/sessions-and-network.md §6.3):
// a policy-language condition evaluated on every activity and vote the session submits,
// before the policies. True lets the request go on to the policies (which still decide:
// a scope only narrows); false, an evaluation error, or a profile that cannot be read refuse
// it with a 403 before anything is recorded. Queries are not scoped (docs/sessions-and-network.md §6.3).
//
// Cost: a request whose credential has no profile pays one property check. A profiled one
// pays a look-up of the profile the first time this process sees it: profiles are immutable,
// so the compiled scope is kept by profile id and never goes stale.
import { permissionDenied } from "../errors.ts";
import {
  compileExpression,
  PassBudget,
  PolicyCompileError,
  PolicyRuntimeError,
  type CompiledExpression,
  type EvalEnv,
} from "../policy/index.ts";
import { sessionProfileById } from "../store/session-profiles.ts";
import type { Executor } from "../store/schema.ts";
import type { Principal } from "./principal.ts";
import { Lru } from "../cache/lru.ts";

/** Compiled scopes kept per process (each a few kB at most); the least recently used goes first. */
const MAX_CACHED_SCOPES = 2000;

type Loaded = { scope: CompiledExpression } | { broken: string };
const cache = new Lru<Loaded>(MAX_CACHED_SCOPES);

async function load(db: Executor, profileId: string): Promise<Loaded> {
  const hit = cache.get(profileId);
  if (hit) return hit;
  const row = await sessionProfileById(db, profileId);
  // A session key names a profile that exists (logins check it); one that does not is never allowed. Not cached: nothing to keep.
  if (!row) return { broken: "the session profile no longer exists" };
  let loaded: Loaded;
  try {
    const scope = compileExpression("condition", row.scope);
    loaded = scope ? { scope } : { broken: "the session profile's scope is empty" };
  } catch (err) {
    // Compiled when the profile was made; a later language change could break it: refused, never allowed.
    if (!(err instanceof PolicyCompileError)) throw err;
    loaded = { broken: `the session profile's scope no longer compiles: ${err.message}` };
  }
  cache.set(profileId, loaded);
  return loaded;
}

/** True or false for the request, or why it could not be evaluated. */
function evaluate(scope: CompiledExpression, env: EvalEnv): boolean | string {
  try {
    // As policies judge it (policy/engine.ts): with several wallets named, a scope reading
    // `wallet` must hold for each one.
    // The passes share one budget (docs/policy-language.md §11.1); running out refuses.
    const budget = new PassBudget();
    const wallets = env.activity?.wallets;
    if (wallets && wallets.length > 1 && scope.roots.has("wallet"))
      return wallets.every((wallet) => budget.run((m) => scope.evaluate({ ...env, wallet }, m)));
    return budget.run((m) => scope.evaluate(env, m));
  } catch (err) {
    if (err instanceof PolicyRuntimeError) return err.message;
    throw err;
  }
}

const refused = (profileId: string, why: string) =>
  permissionDenied(`request not allowed by the session's scope (session profile ${profileId}): ${why}`);

/**
 * Throws the 403 unless the request's session may submit this activity. `env` is what the
 * policies see for it: `activity` (type, kind, resource, action, params and the wallet / key /
 * signing keywords), `approvers` and `credentials` (the submitting user and the session key),
 * `time.now`. No-op for a credential without a profile.
 */
export function refuseOutsideSessionScope(db: Executor, principal: Principal, env: EvalEnv): void | Promise<void> {
  const profileId = principal.credential.sessionProfileId;
  // Nothing to wait for without a profile: the hot path gets no extra tick.
  if (profileId === undefined) return;
  return checkScope(db, profileId, env);
}

async function checkScope(db: Executor, profileId: string, env: EvalEnv): Promise<void> {
  // A scoped session renews itself only into the same scope: a login it submits (the types
  // exposing `session_profile_id`) must name its own profile, whatever the scope allows —
  // otherwise a refresh without sessionProfileId would shed the scope (core's refreshSession
  // passes the session's profile on).
  const params = env.activity?.params;
  if (params && Object.hasOwn(params, "session_profile_id") && params.session_profile_id !== profileId) {
    throw refused(profileId, `a login submitted by this session must name the same sessionProfileId (${profileId})`);
  }
  const loaded = await load(db, profileId);
  if ("broken" in loaded) throw refused(profileId, loaded.broken);
  const outcome = evaluate(loaded.scope, env);
  if (outcome === true) return;
  throw refused(
    profileId,
    outcome === false
      ? `its scope ${JSON.stringify(loaded.scope.source.slice(0, 200))} is false for ${env.activity?.type ?? "this request"}`
      : `its scope could not be evaluated: ${outcome}`,
  );
}
