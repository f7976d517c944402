// The declaration of a query (POST /public/v1/query/<op>): flat request body with
// `organizationId`, no timestamp, no activity.
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import type { Db } from "../store/schema.ts";
import type { ServiceState } from "../service-state.ts";
import type { UserRow } from "../store/users.ts";
import type { Actor, TargetOrganization } from "../activities/define.ts";
import { compile, type Validator } from "../schemas/validate.ts";
import type { CredentialScope } from "../auth/credential-scope.ts";
import type { LoginSettings } from "../logins/settings.ts";
import type { CredentialFacts } from "../policy/facts.ts";

export interface QueryContext {
  db: Db;
  /** The store's caches (service state). */
  state: ServiceState;
  /** The organization named by the request's organizationId. */
  organization: TargetOrganization;
  actor: Actor;
  /** The caller's user row (e.g. for canApprove / canReject). */
  viewer: UserRow;
  now: number;
  /** The service's login settings (list_suborgs's OIDC_TOKEN filter reads the trusted issuers); absent: defaults. */
  logins?: LoginSettings;
  /** The caller is an auth proxy's key, i.e. anyone on the internet (docs/auth-proxy.md §3). */
  byAuthProxy?: boolean;
  /** The credential that stamped the query, as the consensus keyword `credentials` sees it (dry_run_policies' intent mode). */
  credential?: CredentialFacts;
}

export interface QueryDefinition<R extends TObject = TObject, S extends TSchema = TSchema> {
  op: string;
  summary: string;
  /** The whole request body, organizationId included. */
  request: R;
  /** Where the caller's credential may be found; default "target-then-ancestors" (whoami: "then-descendants"). */
  credentialScope?: CredentialScope;
  /** The response: documents it in the OpenAPI document and types `run`. */
  response: S;
  run(ctx: QueryContext, req: Static<R>): Promise<Static<S>>;
}

/** A query as the pipeline sees it: the request and response types are bound inside `run`. */
export interface CompiledQuery {
  op: string;
  summary: string;
  request: TObject;
  response: TSchema;
  credentialScope: CredentialScope;
  validator: Validator<TObject>;
  /** `req` is the body as `validator` parsed it. */
  run(ctx: QueryContext, req: Static<TObject>): Promise<unknown>;
}

export function defineQuery<R extends TObject, S extends TSchema>(def: QueryDefinition<R, S>): CompiledQuery {
  const validator = compile(def.request);
  const { run } = def;
  return {
    op: def.op,
    summary: def.summary,
    request: def.request,
    response: def.response,
    credentialScope: def.credentialScope ?? "target-then-ancestors",
    validator,
    run(ctx, req) {
      if (!validator.is(req)) throw new Error(`query ${def.op}: request does not match its schema`);
      return run(ctx, req);
    },
  };
}
