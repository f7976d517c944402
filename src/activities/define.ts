// The declaration of an activity. Everything else — routing, validation, OpenAPI (request
// and result schemas), the intent/result names of the Activity object, the policy
// resource/action — is derived from it, so adding an operation is one file plus one line in
// registry.ts. The parameter and result types are bound here, at definition time: the
// pipeline holds a CompiledActivity and calls its hooks without knowing them.
import type { Static, TObject } from "@sinclair/typebox";
import type { ApiError } from "../errors.ts";
import type { Executor, Tx } from "../store/schema.ts";
import type { ChainCache } from "../store/organizations.ts";
import { compile, type Validator } from "../schemas/validate.ts";
import type { ParamValue, SigningFacts } from "../policy/facts.ts";
import type { PolicyWallets } from "../wallets/policy-facts.ts";
import type { CredentialScope } from "../auth/credential-scope.ts";
import type { Actor, TargetOrganization } from "../auth/principal.ts";
import type { ServiceKey } from "../auth/service-keys.ts";
import type { LoginSettings } from "../logins/settings.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { ServiceKeyPurpose } from "../store/schema.ts";
import type { Caller } from "../network/request-network.ts";
import type { WebhookUrlPolicy } from "../webhooks/url-policy.ts";
import type { SignerKey } from "../signing/sign.ts";
import type { Signer } from "../signing/resolve.ts";
import { checkSecretPaths, redactSecrets, relaxSecrets } from "./secret-params.ts";

/** What a handler may use beyond its transaction (pipeline/services.ts builds it). */
export interface ActivityServices {
  /** The active service key of a purpose (created on first use), read through the activity's transaction. */
  serviceKey(purpose: ServiceKeyPurpose): Promise<ServiceKey>;
  /** Public keys (uncompressed hex) that verify what keys of the purpose signed: active and published. */
  verifyingKeys(purpose: ServiceKeyPurpose): Promise<string[]>;
  /** Seals secrets at rest (OTP target keys). */
  readonly masterKey: MasterKey;
  logins: LoginSettings;
  log?: { warn(obj: object, msg: string): void };
  /** SIGIL_TVC_IMAGE_ROOT (real path); undefined: TVC is off (docs/tvc-isolation.md §1). */
  tvcImageRoot?: string;
}

/** ActivityDefinition.scope: an activity of the service's operator, not of its tenants. */
export interface ActivityScope {
  /** Top-level organizations only (the ones `sigil init` makes), by their own credentials. */
  only: "top-level";
  /** Whether the operator turned the feature on; absent: always on. */
  enabled?(env: { tvcImageRoot?: string }): boolean;
  /** The one refusal (403), whichever condition failed. */
  refusal(organizationId: string): ApiError;
}

/** What an `admit` hook may know of the service's configuration. */
export interface AdmitEnv {
  /** The organization the request targets. */
  organizationId: string;
  /** SIGIL_TVC_IMAGE_ROOT (real path); undefined: TVC is off. */
  tvcImageRoot?: string;
  /** Where webhook endpoints may point (SIGIL_WEBHOOKS_ALLOW_LOOPBACK). */
  webhookUrls: WebhookUrlPolicy;
}

export type { PolicyWallets };

// Who is acting and the organization targeted are the authentication's answer (auth/principal.ts).
export type { Actor, TargetOrganization };

/**
 * What `prepare` may use: the plain database handle (reads only: no transaction is open),
 * the services, and who is acting. Runs before the transaction that may execute the
 * activity (see ActivityDefinition.prepare).
 */
export interface PrepareContext {
  db: Executor;
  organization: TargetOrganization;
  /** The submitter at submission; the voter before an approval (the handler still runs as the submitter). */
  actor: Actor;
  now: number;
  chains: ChainCache;
  services: ActivityServices;
  /**
   * With policySigner, at submission only: the key its signWith names, as the submission found
   * it and the policies were decided over. Work done with it here must be checked against the
   * key `execute` finds in its transaction (docs/signing.md §6).
   */
  signer?: Signer;
}

export interface ExecuteContext<X = undefined> {
  /** What the definition's `prepare` returned (undefined without one). */
  prepared: X;
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
  /** The store's organization-chain cache (service state). */
  chains: ChainCache;
  services: ActivityServices;
  /**
   * Where the request that submitted the activity came from, when it runs at submission
   * (absent when a later approval executes it): set_ip_allowlist refuses to lock its caller out.
   */
  caller?: Caller;
  /**
   * With policySigner: the key its signWith names, as the submission found it, when this
   * transaction found the organization's keys unchanged since (docs/signing.md §5). Absent:
   * the handler reads it in this transaction (signerInTransaction).
   */
  signer?: Signer;
}

export interface ActivityDefinition<P extends TObject = TObject, R extends TObject = TObject, X = undefined> {
  /** ACTIVITY_TYPE_... accepted at that path. Several definitions may share an op. */
  type: string;
  /** Path segment: POST /public/v1/submit/<op>. Default: the type without ACTIVITY_TYPE_ and _V<n>, lower case. */
  op?: string;
  /** Key of the intent inside `activity.intent`. Default: e.g. createUsersIntentV4 for ACTIVITY_TYPE_CREATE_USERS_V4. */
  intent?: string;
  /** Key of the result inside `activity.result`. Default: e.g. createUsersResult (no version suffix). */
  result?: string;
  /** Policy facts: activity.resource / action / kind. */
  resource: string;
  action: string;
  kind: string;
  summary: string;
  params: P;
  /**
   * Parameters that are live secrets (a one-time code, a token), as paths of string fields
   * ("otpCode", "a.b"): the recorded intent holds them sealed with the master key and bound to
   * the activity, every reader sees "<redacted>", and the policy hooks below see the
   * placeholder too, so a secret is never a policy fact (docs/activities.md §10).
   */
  secretParams?: readonly string[];
  /** The result object (`activity.result.<result>`): documents it and types `execute`. */
  returns: R;
  /**
   * What `activity.params` exposes to policy conditions (snake_case names). Absent:
   * nothing, and any `activity.params.x` is a MissingField error.
   */
  policyParams?(params: Static<P>): Record<string, ParamValue>;
  /**
   * The wallets the activity names, which the condition keywords `wallet` / `wallets` are
   * bound to (governance/governance.ts reads them): existing ones by id, or the one it creates
   * by name. Absent: those keywords are a runtime error (OUTCOME_ERROR), never an allow.
   */
  policyWallets?(params: Static<P>): PolicyWallets | undefined;
  /**
   * The signWith of an activity that signs: governance/governance.ts resolves it in the target
   * organization and binds `private_key`, `wallet_account` and `wallet` (docs/signing.md §4).
   */
  policySigner?(params: Static<P>): string;
  /**
   * What the request signs, parsed: the `eth` / `solana` condition keywords
   * (docs/signing-policies.md §1). Pure (no I/O), so an approval re-derives the same facts
   * from the stored intent; `check` has already refused what does not parse.
   */
  policySigning?(params: Static<P>): SigningFacts | undefined;
  /**
   * With policySigner: checks that need the key's curve or public key (an encoding or hash
   * function the curve cannot sign, a transaction the key is no signer of), run at submission before authorization once the key is found — a key
   * the organization does not hold is a 404 there — so a request that cannot sign never
   * waits for approvals (docs/signing.md §1).
   */
  checkSigner?(params: Static<P>, key: SignerKey): void;
  /**
   * The private key (by id) an activity exports: binds `private_key` as for a signer, without
   * the signer's look-up at submission (the activity answers 404 itself; docs/export-import.md §3.4).
   */
  policyPrivateKey?(params: Static<P>): string;
  /** docs/policy-language.md §6.8: allowed without a policy unless one explicitly allows or denies (own credentials). */
  implicitlyAllowed?(params: Static<P>, actor: Actor): boolean;
  /** docs/policy-language.md §4.9: decided by the root quorum alone; policies are never consulted. */
  rootOnly?: boolean;
  /**
   * The activity deletes its organization: its transaction locks the organization's row for
   * update from its first statement, instead of the key-share lock every other activity takes
   * there, so that two such activities never both hold the weaker lock and wait to upgrade it —
   * a deadlock (docs/organizations.md §7.3).
   */
  deletesOrganization?: boolean;
  /**
   * An operator gate (docs/request-path.md §2.4): only top-level organizations may submit and
   * execute it, and only while the operator has the feature on. The pipeline checks it for
   * every activity that declares one (pipeline/scope.ts), at validation and again in the
   * transaction that executes it; the handler never does.
   */
  scope?: ActivityScope;
  /**
   * A credential of an ancestor organization may submit this activity against a
   * sub-organization (docs/request-path.md §5). Only the authentication and recovery flows in
   * PARENT_STAMPABLE may set it (init_otp, verify_otp, otp_login, stamp_login and oauth_login
   * do); every other activity is refused to a parent credential before any policy is
   * consulted (pipeline/parent-writes.ts), and setting it on one stops the service at startup.
   */
  parentMayStamp?: boolean;
  /**
   * Where the signing credential may be found (auth/credential-scope.ts, docs/stamps.md §5).
   * Default: the target organization or an ancestor. stamp_login sets "then-descendants": a
   * credential of a user of a sub-organization below the target logs that user in, in their
   * organization (the other logins are stamped by the parent's own key, found as usual).
   * Definitions sharing an op must agree (the scope is chosen from the path).
   */
  credentialScope?: CredentialScope;
  /**
   * Checks that need more than the schema (e.g. policy expressions), run before
   * authorization so an invalid request is refused instead of waiting for approvals.
   */
  check?(params: Static<P>): void;
  /**
   * Checks that need the service's configuration or the file system (a TVC image under the
   * image root): run at submission after validation and before authorization, so a refused
   * request records nothing. Not run again for approvals (execute checks what must hold then).
   */
  admit?(params: Static<P>, env: AdmitEnv): Promise<void>;
  /**
   * I/O that must not happen inside a database transaction (an OAuth provider's token
   * endpoint, an issuer's JWKS): run before the transaction that may execute the activity —
   * at submission once authorization allowed it (`when` = "submission"), and before each
   * approving vote while it awaits consensus ("approval": the vote may or may not complete
   * it, so this must be safe to repeat). What it returns reaches `execute` as
   * `ctx.prepared`; its errors are the request's answer, nothing recorded. Returning
   * undefined for an approval (e.g. a single-use authorization code meant for the moment of
   * submission) makes an execution at that vote fail with a clear error.
   */
  prepare?(ctx: PrepareContext, params: Static<P>, when: "submission" | "approval"): Promise<X | undefined>;
  execute(ctx: ExecuteContext<X>, params: Static<P>): Promise<Static<R>>;
}

/**
 * How a submit path is handled (pipeline/routes.ts lists each kind's steps): "activity"
 * creates an activity; "vote" adds a vote to an existing one. Login types are "activity"
 * definitions with their own credentialScope and parentMayStamp.
 */
export type RouteKind = "activity" | "vote";

/** Parameters as the pipeline holds them: validated against the definition's schema. */
export type ActivityParams = Static<TObject>;

/**
 * A definition as the pipeline sees it: the parameter type is bound inside its hooks at
 * definition time, so the pipeline calls them without knowing it. `R` keeps the result's
 * schema type for whoever reads results by definition (the tests' `completed`); the pipeline
 * uses the default.
 */
export interface CompiledActivity<R extends TObject = TObject> {
  route: "activity";
  op: string;
  type: string;
  intent: string;
  result: string;
  resource: string;
  action: string;
  kind: string;
  summary: string;
  /** ActivityDefinition.secretParams (docs/activities.md §10). */
  secretParams?: readonly string[];
  rootOnly?: boolean;
  deletesOrganization?: boolean;
  scope?: ActivityScope;
  parentMayStamp?: boolean;
  credentialScope?: CredentialScope;
  params: TObject;
  /** The result object's schema. */
  returns: R;
  validator: Validator<TObject>;
  policyParams?(params: ActivityParams): Record<string, ParamValue>;
  policyWallets?(params: ActivityParams): PolicyWallets | undefined;
  policySigner?(params: ActivityParams): string;
  policySigning?(params: ActivityParams): SigningFacts | undefined;
  checkSigner?(params: ActivityParams, key: SignerKey): void;
  policyPrivateKey?(params: ActivityParams): string;
  implicitlyAllowed?(params: ActivityParams, actor: Actor): boolean;
  check?(params: ActivityParams): void;
  admit?(params: ActivityParams, env: AdmitEnv): Promise<void>;
  prepare?(ctx: PrepareContext, params: ActivityParams, when: "submission" | "approval"): Promise<unknown>;
  execute(ctx: ExecuteContext<unknown>, params: ActivityParams): Promise<Record<string, unknown>>;
}

/** ACTIVITY_TYPE_CREATE_USERS_V4 → { op: create_users, intent: createUsersIntentV4, result: createUsersResult } */
export function namesOf(type: string): { op: string; intent: string; result: string } {
  const m = /^ACTIVITY_TYPE_(.+?)(?:_(V\d+))?$/.exec(type);
  if (!m) throw new Error(`activity type ${type}: expected ACTIVITY_TYPE_<NAME>[_V<n>]`);
  const op = m[1]!.toLowerCase();
  const camel = op.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  return { op, intent: `${camel}Intent${m[2] ?? ""}`, result: `${camel}Result` };
}

export function defineActivity<P extends TObject, R extends TObject = TObject, X = undefined>(
  def: ActivityDefinition<P, R, X>,
): CompiledActivity<R> {
  const names = namesOf(def.type);
  const validator = compile(def.params);
  // Parameters reach the hooks validated (at submission, or stored after it); the guard
  // gives them back their type.
  const typed = (params: ActivityParams): Static<P> => {
    if (validator.is(params)) return params;
    throw new Error(`${def.type}: parameters do not match the definition's schema`);
  };
  // The policy hooks see secret parameters as the placeholder, at submission and when an
  // approval re-derives the facts from the recorded (sealed) intent alike (docs/activities.md §10.3).
  const secrets = def.secretParams ?? [];
  checkSecretPaths(def.type, def.params, secrets);
  const policyValidator = secrets.length ? compile(relaxSecrets(def.params, secrets)) : validator;
  const forPolicy = (params: ActivityParams): Static<P> => {
    const shown = redactSecrets(params, secrets);
    if (policyValidator.is(shown)) return shown;
    throw new Error(`${def.type}: parameters do not match the definition's schema`);
  };
  const {
    policyParams,
    policyWallets,
    policySigner,
    policySigning,
    checkSigner,
    policyPrivateKey,
    implicitlyAllowed,
    check,
    admit,
    prepare,
    execute,
  } = def;
  return {
    route: "activity",
    op: def.op ?? names.op,
    type: def.type,
    intent: def.intent ?? names.intent,
    result: def.result ?? names.result,
    resource: def.resource,
    action: def.action,
    kind: def.kind,
    summary: def.summary,
    ...(secrets.length ? { secretParams: [...secrets] } : {}),
    ...(def.rootOnly !== undefined ? { rootOnly: def.rootOnly } : {}),
    ...(def.deletesOrganization ? { deletesOrganization: true } : {}),
    ...(def.scope ? { scope: def.scope } : {}),
    ...(def.parentMayStamp !== undefined ? { parentMayStamp: def.parentMayStamp } : {}),
    ...(def.credentialScope !== undefined ? { credentialScope: def.credentialScope } : {}),
    params: def.params,
    returns: def.returns,
    validator,
    ...(policyParams ? { policyParams: (params: ActivityParams) => policyParams(forPolicy(params)) } : {}),
    ...(policyWallets ? { policyWallets: (params: ActivityParams) => policyWallets(forPolicy(params)) } : {}),
    ...(policySigner ? { policySigner: (params: ActivityParams) => policySigner(forPolicy(params)) } : {}),
    ...(policySigning ? { policySigning: (params: ActivityParams) => policySigning(forPolicy(params)) } : {}),
    ...(checkSigner ? { checkSigner: (params: ActivityParams, key: SignerKey) => checkSigner(typed(params), key) } : {}),
    ...(policyPrivateKey ? { policyPrivateKey: (params: ActivityParams) => policyPrivateKey(forPolicy(params)) } : {}),
    ...(implicitlyAllowed
      ? { implicitlyAllowed: (params: ActivityParams, actor: Actor) => implicitlyAllowed(forPolicy(params), actor) }
      : {}),
    ...(check ? { check: (params: ActivityParams) => check(typed(params)) } : {}),
    ...(admit ? { admit: (params: ActivityParams, env: AdmitEnv) => admit(typed(params), env) } : {}),
    ...(prepare
      ? { prepare: (ctx: PrepareContext, params: ActivityParams, when: "submission" | "approval") => prepare(ctx, typed(params), when) }
      : {}),
    // `prepared` is what this definition's own prepare returned (settle.ts passes it through).
    execute: async (ctx, params) => execute(ctx as ExecuteContext<X>, typed(params)),
  };
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

/** As defineActivity, `op` and `intent` default from the type. */
export function defineVote(
  def: Omit<VoteDefinition, "route" | "validator" | "op" | "intent"> & Partial<Pick<VoteDefinition, "op" | "intent">>,
): VoteDefinition {
  const names = namesOf(def.type);
  return { ...def, op: def.op ?? names.op, intent: def.intent ?? names.intent, route: "vote", validator: compile(def.params) };
}

/** The definition each route kind is declared by. */
export interface RouteDefinitions {
  activity: CompiledActivity;
  vote: VoteDefinition;
}

/** What a submit path routes to. */
export type SubmitRoute = RouteDefinitions[RouteKind];
