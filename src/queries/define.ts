// The declaration of a query (POST /public/v1/query/<op>): flat request body with
// `organizationId`, no timestamp, no activity.
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import type { Db } from "../store/schema.ts";
import type { UserRow } from "../store/users.ts";
import type { Actor, TargetOrganization } from "../activities/define.ts";
import { compile, type Validator } from "../schemas/validate.ts";

export interface QueryContext {
  db: Db;
  /** The organization named by the request's organizationId. */
  organization: TargetOrganization;
  actor: Actor;
  /** The caller's user row (e.g. for canApprove / canReject). */
  viewer: UserRow;
  now: number;
}

export interface QueryDefinition<R extends TObject = TObject> {
  op: string;
  summary: string;
  /** The whole request body, organizationId included. */
  request: R;
  /** Documents the response in the OpenAPI document. */
  response: TSchema;
  run(ctx: QueryContext, req: Static<R>): Promise<unknown>;
}

export interface CompiledQuery extends QueryDefinition {
  validator: Validator<TObject>;
}

export function defineQuery<R extends TObject>(def: QueryDefinition<R>): CompiledQuery {
  return { ...(def as unknown as QueryDefinition), validator: compile(def.request) };
}
