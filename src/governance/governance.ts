// The I/O edge of the policy engine: an organization's compiled policies and root quorum
// (cached per policy version), and the facts the engine evaluates (activity, approvers,
// credentials) read from the store.
import { createHash } from "node:crypto";
import { notFound } from "../errors.ts";
import { compilePolicy, mayVote, policySet, type CompiledPolicy } from "../policy/engine.ts";
import { PolicyCompileError, PolicyRuntimeError, type CompiledExpression } from "../policy/index.ts";
import type { ActivityFacts, CredentialFacts, ParamValue, UserFacts } from "../policy/facts.ts";
import { governanceOf, policiesOf, type PolicyRow } from "../store/policies.ts";
import type { Executor } from "../store/schema.ts";
import { tagIdsByUser, type UserRow } from "../store/users.ts";
import type { ActivityRow, VoteRow } from "../store/activities.ts";
import type { ActivityParams as Params, CompiledActivity } from "../activities/define.ts";
import { activityByType } from "../activities/registry.ts";
import { walletFacts } from "../wallets/policy-facts.ts";
import { signerFacts } from "../signing/policy-facts.ts";
import type { Signer } from "../signing/resolve.ts";
import { GovernanceCache, type OrgGovernance } from "./cache.ts";

export { GovernanceCache, type OrgGovernance };

/** A stored policy that no longer compiles (e.g. after a language change) errors, it never allows. */
function brokenPolicy(row: PolicyRow, err: PolicyCompileError): CompiledPolicy {
  const fails: CompiledExpression = {
    field: err.field,
    source: "",
    roots: new Set(),
    userFields: new Set(),
    stringLiterals: new Set(),
    activityFields: new Set(["params"]),
    mayFail: true,
    iterations: 0,
    evaluate() {
      throw new PolicyRuntimeError("Internal", `stored policy no longer compiles: ${err.message}`);
    },
  };
  return { id: row.id, effect: row.effect, condition: fails, consensus: null, time: null };
}

function compileStored(row: PolicyRow): CompiledPolicy {
  try {
    return compilePolicy({ id: row.id, effect: row.effect, condition: row.condition, consensus: row.consensus, time: row.time });
  } catch (err) {
    if (err instanceof PolicyCompileError) return brokenPolicy(row, err);
    throw err;
  }
}

/**
 * The policies and root quorum of an organization. `knownVersion` (from the request
 * snapshot) saves the version query when the cached set is current.
 */
export async function governance(
  cache: GovernanceCache,
  db: Executor,
  organizationId: string,
  knownVersion?: number,
): Promise<OrgGovernance> {
  const hit = cache.get(organizationId);
  if (hit && hit.version === knownVersion) return hit;
  const g = await governanceOf(db, organizationId);
  if (!g) throw notFound(`no organization ${organizationId}`, "ORGANIZATION_NOT_FOUND");
  if (hit && hit.version === g.version) return hit;
  const rows = await policiesOf(db, organizationId);
  const policyIds = rows.map((r) => r.id);
  const entry: OrgGovernance = {
    version: g.version,
    set: policySet(rows.map(compileStored)),
    quorum: { userIds: new Set(g.rootUserIds), threshold: g.threshold },
    setId: createHash("sha256").update(JSON.stringify(policyIds)).digest("base64url").slice(0, 32),
    policyIds,
    persisted: false,
  };
  cache.set(organizationId, entry);
  return entry;
}

const NO_PARAMS: Readonly<Record<string, ParamValue>> = Object.freeze({});

export async function activityFacts(
  db: Executor,
  def: CompiledActivity,
  params: Params,
  organizationId: string,
  signer?: Signer,
): Promise<ActivityFacts> {
  const facts: ActivityFacts = {
    type: def.type,
    kind: def.kind,
    resource: def.resource,
    action: def.action,
    params: def.policyParams?.(params) ?? NO_PARAMS,
  };
  // The wallets it names, as they stand now: the `wallet` / `wallets` condition keywords.
  const named = def.policyWallets?.(params);
  if (named) facts.wallets = await walletFacts(db, organizationId, named);
  // The key a signing activity names: `private_key`, `wallet_account`, `wallet` (docs/signing.md §4);
  // at submission the key already resolved (docs/signing.md §5).
  const signWith = def.policySigner?.(params);
  if (signWith !== undefined) Object.assign(facts, await signerFacts(db, organizationId, signWith, signer));
  // The private key an export names: `private_key` (docs/export-import.md §3.4).
  const privateKeyId = def.policyPrivateKey?.(params);
  if (privateKeyId !== undefined) Object.assign(facts, await signerFacts(db, organizationId, privateKeyId));
  // What it signs, parsed: `eth.tx`, `solana.tx`, … (docs/signing-policies.md §1).
  const signing = def.policySigning?.(params);
  if (signing) facts.signing = signing;
  return facts;
}

/** A user as the consensus keyword `approvers` sees it. */
export function userFact(u: UserRow, tags: readonly string[]): UserFacts {
  return { id: u.id, tags, email: u.email ?? "", alias: u.name };
}

/** Users as `approvers` sees them; tags are read only when needed. */
export async function userFacts(db: Executor, users: readonly UserRow[], withTags: boolean): Promise<UserFacts[]> {
  const tags = withTags
    ? await tagIdsByUser(
        db,
        users.map((u) => u.id),
      )
    : undefined;
  return users.map((u) => userFact(u, tags?.get(u.id) ?? []));
}

/** The credential behind a vote, as the consensus keyword `credentials` sees it. */
export function credentialFacts(
  v: Pick<VoteRow, "credential_id" | "credential_type" | "user_id" | "public_key"> & { signature?: string },
): CredentialFacts {
  // Only passkeys carry a WebAuthn credential id (API keys read ''): a passkey's vote keeps the
  // whole stamp as its signature, which names it.
  const credentialId = v.credential_type === "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR" ? webauthnCredentialId(v.signature) : "";
  return { id: v.credential_id, user_id: v.user_id, type: v.credential_type, credential_id: credentialId, public_key: v.public_key };
}

function webauthnCredentialId(stamp: string | undefined): string {
  if (!stamp) return "";
  try {
    const parsed = JSON.parse(stamp) as { credentialId?: unknown };
    return typeof parsed.credentialId === "string" ? parsed.credentialId : "";
  } catch {
    return "";
  }
}

/** The organization whose policies decide an activity, and its votes: its submitter's. */
export function decidingOrganization(row: ActivityRow, votes: readonly VoteRow[]): string {
  const submitterVote = votes.find((v) => v.user_id === row.submitted_by) ?? votes[0];
  return submitterVote?.user_organization_id ?? row.organization_id;
}

export interface VoterStanding {
  def: CompiledActivity;
  /** The stored intent: validated when it was submitted. */
  params: Params;
  facts: ActivityFacts;
  gov: OrgGovernance;
  /** The voter, tags included. */
  voter: UserFacts;
  /** Root quorum member, initiator, or included in an applicable policy's consensus (docs/policy-language.md §6.5). */
  eligible: boolean;
}

/** What a would-be voter may do on an activity; undefined when its type is no longer served. */
export async function voterStanding(
  db: Executor,
  row: ActivityRow,
  organizationId: string,
  user: UserRow,
  nowMs: number,
  /** The store's (service state); without it the policies are read and compiled afresh. */
  cache: GovernanceCache = new GovernanceCache(),
): Promise<VoterStanding | undefined> {
  const def = activityByType(row.type);
  if (!def) return undefined;
  const params = JSON.parse(row.intent) as Params;
  const facts = await activityFacts(db, def, params, row.organization_id);
  const gov = await governance(cache, db, organizationId);
  const [voter] = await userFacts(db, [user], true);
  const eligible = mayVote(gov.set, voter!, {
    quorum: gov.quorum,
    initiatorId: row.submitted_by,
    activity: facts,
    rootOnly: def.rootOnly ?? false,
    nowMs,
  });
  return { def, params, facts, gov, voter: voter!, eligible };
}
