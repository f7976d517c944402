// The declaration of an activity. Everything else — routing, validation, OpenAPI, the
// intent/result names of the Activity object, the policy resource/action — is derived from
// it, so adding an operation is one file plus one line in registry.ts.
import type { Static, TObject } from "@sinclair/typebox";
import type { Tx } from "../store/schema.ts";
import { compile, type Validator } from "../schemas/validate.ts";
import type { ParamValue } from "../policy/facts.ts";

/** Who is acting: the user whose credential signed the request, and where that user lives. */
export interface Actor {
  userId: string;
  userName: string;
  /** The user's organization: the target organization or one of its ancestors. */
  organizationId: string;
  organizationName: string;
}

/** The organization a request targets. Its existence is established by authentication. */
export interface TargetOrganization {
  id: string;
}

export interface ExecuteContext {
  /**
   * The activity's transaction. Handlers read and write through it only: on SQLite it may
   * be shared with other activities of the same commit group (each in its own savepoint),
   * and a query on the plain database handle would wait for the group it is part of.
   */
  tx: Tx;
  /** The organization the activity targets (`organizationId` of the request). */
  organization: TargetOrganization;
  actor: Actor;
  activityId: string;
  /** Time of the request, ms; every row written by the activity carries it. */
  now: number;
}

export interface ActivityDefinition<P extends TObject = TObject> {
  /** Path segment: POST /public/v1/submit/<op>. */
  op: string;
  /** ACTIVITY_TYPE_... accepted at that path. Several definitions may share an op. */
  type: string;
  /** Key of the intent inside `activity.intent`, e.g. createUsersIntentV4. */
  intent: string;
  /** Key of the result inside `activity.result`, e.g. createUsersResult. */
  result: string;
  /** Policy facts (see POLICY-LANGUAGE): activity.resource / action / kind. */
  resource: string;
  action: string;
  kind: string;
  summary: string;
  params: P;
  /**
   * What `activity.params` exposes to policy conditions (snake_case names, POLICY-LANGUAGE
   * §4.8). Absent: nothing, and any `activity.params.x` is a MissingField error.
   */
  policyParams?(params: Static<P>): Record<string, ParamValue>;
  /** §6.8: allowed without a policy unless one explicitly allows or denies (own credentials). */
  implicitlyAllowed?(params: Static<P>, actor: Actor): boolean;
  /** §4.9: decided by the root quorum alone; policies are never consulted. */
  rootOnly?: boolean;
  /**
   * §6.7: a credential of an ancestor organization may submit this activity against a
   * sub-organization. Only authentication and recovery flows (OTP, OAuth, email auth and
   * recovery) will set it; every other activity is refused to a parent credential before
   * any policy is consulted (pipeline/parent-writes.ts). No current activity sets it.
   */
  parentMayStamp?: boolean;
  /**
   * Checks that need more than the schema (e.g. policy expressions), run before
   * authorization so an invalid request is refused instead of waiting for approvals.
   */
  check?(params: Static<P>): void;
  execute(ctx: ExecuteContext, params: Static<P>): Promise<Record<string, unknown>>;
}

/**
 * How a submit path is handled (pipeline/routes.ts lists each kind's steps): "activity"
 * creates an activity; "vote" adds a vote to an existing one. Login types will add theirs.
 */
export type RouteKind = "activity" | "vote";

export interface CompiledActivity extends ActivityDefinition {
  route: "activity";
  validator: Validator<TObject>;
}

export function defineActivity<P extends TObject>(def: ActivityDefinition<P>): CompiledActivity {
  return { ...(def as unknown as ActivityDefinition), route: "activity", validator: compile(def.params) };
}

export type VoteSelection = "VOTE_SELECTION_APPROVED" | "VOTE_SELECTION_REJECTED";

/**
 * approve_activity / reject_activity: a vote on another activity, found by fingerprint.
 * No activity of its own: the vote is recorded on the target, which is re-evaluated
 * (pipeline/vote.ts) and returned.
 */
export interface VoteDefinition {
  route: "vote";
  op: string;
  type: string;
  intent: string;
  summary: string;
  selection: VoteSelection;
  /** As ActivityDefinition.parentMayStamp: votes by a parent credential are refused without it. */
  parentMayStamp?: boolean;
  params: TObject;
  validator: Validator<TObject>;
}

export function defineVote(def: Omit<VoteDefinition, "route" | "validator">): VoteDefinition {
  return { ...def, route: "vote", validator: compile(def.params) };
}

/** The definition each route kind is declared by. */
export interface RouteDefinitions {
  activity: CompiledActivity;
  vote: VoteDefinition;
}

/** What a submit path routes to. */
export type SubmitRoute = RouteDefinitions[RouteKind];
