// The inputs of a recorded activity's evaluation, rebuilt for replay and explanation
// (docs/policy-dry-run.md §4.2): its facts from the recorded intent with the code submission
// uses (governance/governance.ts activityFacts), its approvers and their credentials from its
// votes. Read in batches — a page of activities costs one query for the votes and one for the
// users behind them, whatever its size.
import type { CompiledActivity } from "../activities/define.ts";
import { activityByType } from "../activities/registry.ts";
import { activityFacts, credentialFacts, decidingOrganization, userFacts } from "../governance/governance.ts";
import type { ActivityRow, VoteRow } from "../store/activities.ts";
import { liveApprovals } from "../policy/approval-window.ts";
import type { ActivityFacts, CredentialFacts, UserFacts } from "../policy/facts.ts";
import type { Executor } from "../store/schema.ts";
import type { UserRow } from "../store/users.ts";
import type { ActivityParams as Params } from "../activities/define.ts";

/** A vote as replay reads it: no message (the request body, up to a megabyte). */
export type RecordedVote = Pick<
  VoteRow,
  | "id"
  | "activity_id"
  | "user_id"
  | "user_organization_id"
  | "selection"
  | "credential_id"
  | "credential_type"
  | "public_key"
  | "signature"
  | "created_at"
>;

const VOTE_COLUMNS = [
  "id",
  "activity_id",
  "user_id",
  "user_organization_id",
  "selection",
  "credential_id",
  "credential_type",
  "public_key",
  "created_at",
] as const;
const WEBAUTHN = "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR";

/** The votes of some activities, each activity's in time order. */
export async function votesByActivity(db: Executor, activityIds: readonly string[]): Promise<Map<string, RecordedVote[]>> {
  const byActivity = new Map<string, RecordedVote[]>();
  if (activityIds.length === 0) return byActivity;
  const rows = await db
    .selectFrom("votes")
    .select(VOTE_COLUMNS)
    // Only a passkey's stamp names anything the facts read (credentialFacts): the others are not fetched.
    .select((eb) => eb.case().when("credential_type", "=", WEBAUTHN).then(eb.ref("signature")).else("").end().as("signature"))
    .where("activity_id", "in", activityIds)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  for (const v of rows) {
    let list = byActivity.get(v.activity_id);
    if (!list) byActivity.set(v.activity_id, (list = []));
    list.push(v);
  }
  return byActivity;
}

/** The organization whose policies decided the activity: its submitter's (governance.ts decidingOrganization). */
export function decidingOrganizationOf(row: { organization_id: string; submitted_by: string }, votes: readonly RecordedVote[]): string {
  // decidingOrganization reads only these columns of the row and its votes.
  return decidingOrganization(row as ActivityRow, votes as readonly VoteRow[]);
}

const MAX_CACHED_USERS = 50_000;

/**
 * Users as `approvers` sees them, read once per request however many activities they approved.
 * A deleted user is absent: its approvals no longer count (as at a vote, pipeline/vote.ts).
 */
export class ApproverCache {
  readonly #users = new Map<string, UserFacts | null>();

  constructor(
    private readonly db: Executor,
    private readonly withTags: boolean,
  ) {}

  async load(userIds: Iterable<string>): Promise<void> {
    const missing = [...new Set(userIds)].filter((id) => !this.#users.has(id));
    if (missing.length === 0) return;
    if (this.#users.size + missing.length > MAX_CACHED_USERS) this.#users.clear();
    for (let i = 0; i < missing.length; i += 1000) {
      const ids = missing.slice(i, i + 1000);
      const rows = (await this.db.selectFrom("users").selectAll().where("id", "in", ids).execute()) as UserRow[];
      for (const u of await userFacts(this.db, rows, this.withTags)) this.#users.set(u.id, u);
      for (const id of ids) if (!this.#users.has(id)) this.#users.set(id, null);
    }
  }

  get(userId: string): UserFacts | undefined {
    return this.#users.get(userId) ?? undefined;
  }
}

/** The approvals that counted at `nowMs` (the 24-hour window), as the engine's approvers and credentials. */
export function approvalsAt(
  votes: readonly RecordedVote[],
  nowMs: number,
  users: ApproverCache,
): { approvers: UserFacts[]; credentials: CredentialFacts[] } {
  const approvers: UserFacts[] = [];
  const credentials: CredentialFacts[] = [];
  for (const v of liveApprovals(votes, nowMs)) {
    const u = users.get(v.user_id);
    if (!u) continue;
    approvers.push(u);
    credentials.push(credentialFacts(v));
  }
  return { approvers, credentials };
}

export interface RebuiltFacts {
  def: CompiledActivity;
  params: Params;
  facts: ActivityFacts;
}

const MAX_MEMO = 10_000;

/**
 * Facts of recorded activities of one organization, from their intents. The wallets and keys
 * an activity names are read as they stand now, once per distinct set of names in a request:
 * the rest of the facts are the intent's own, built by activityFacts itself (called without the
 * look-ups when their result is known), so they cannot drift from what submission builds.
 */
export class FactsBuilder {
  readonly #named = new Map<string, Partial<ActivityFacts>>();
  readonly #pure = new Map<CompiledActivity, CompiledActivity>();

  constructor(
    private readonly db: Executor,
    private readonly organizationId: string,
  ) {}

  /** Undefined when the type is no longer served or the intent is not JSON. */
  async of(row: { type: string; intent: string }): Promise<RebuiltFacts | undefined> {
    const def = activityByType(row.type);
    if (!def) return undefined;
    let params: Params;
    try {
      params = JSON.parse(row.intent) as Params;
    } catch {
      return undefined;
    }
    return { def, params, facts: await this.factsOf(def, params) };
  }

  async factsOf(def: CompiledActivity, params: Params): Promise<ActivityFacts> {
    if (!def.policyWallets && !def.policySigner && !def.policyPrivateKey) return activityFacts(this.db, def, params, this.organizationId);
    const key = JSON.stringify([
      def.policyWallets?.(params) ?? null,
      def.policySigner?.(params) ?? null,
      def.policyPrivateKey?.(params) ?? null,
    ]);
    const known = this.#named.get(key);
    if (known) return Object.assign(await activityFacts(this.db, this.#withoutLookups(def), params, this.organizationId), known);
    const facts = await activityFacts(this.db, def, params, this.organizationId);
    const named: Partial<ActivityFacts> = {};
    if (facts.wallets) named.wallets = facts.wallets;
    if (facts.walletAccount) named.walletAccount = facts.walletAccount;
    if (facts.privateKey) named.privateKey = facts.privateKey;
    if (this.#named.size >= MAX_MEMO) this.#named.clear();
    this.#named.set(key, named);
    return facts;
  }

  #withoutLookups(def: CompiledActivity): CompiledActivity {
    let pure = this.#pure.get(def);
    if (!pure) {
      const { policyWallets: _w, policySigner: _s, policyPrivateKey: _k, ...rest } = def;
      pure = rest as CompiledActivity;
      this.#pure.set(def, pure);
    }
    return pure;
  }
}
