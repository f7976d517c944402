// Policy sets written twice, in Sigil's policy language and in Cedar, and the check that both
// engines decide every request alike. Shared by the benchmark (bench/policy.ts, which must not
// time non-equivalent sets) and the test suite (test/unit/policy-cedar-agreement.test.ts).
//
// Generation is deterministic from a seed. Policies: allow/deny; conditions on type, kind,
// resource and action; consensus by user id, by tag, by two ids, by two approvers holding a tag.
// Requests rotate through three shapes: aimed at an ALLOW policy, aimed at a DENY policy, random.
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { decide, type Decision, type DecisionInput, type PolicySet, type PolicySource } from "../src/policy/engine.ts";
import { activityKind, type UserFacts } from "../src/policy/index.ts";

// ------------------------------------------------------------------------------ generation

/** mulberry32: small, fast, deterministic. */
export function prng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const hex = (n: number) => Array.from({ length: n }, () => int(16).toString(16)).join("");
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${(8 + int(4)).toString(16)}${hex(3)}-${hex(12)}`;
  return { next, int, pick, uuid };
}
export type Rng = ReturnType<typeof prng>;

export interface Activity {
  type: string;
  kind: string;
  resource: string;
  action: string;
}

// A sample of the service's activity types: [type, resource, action].
const CATALOG: Activity[] = (
  [
    ["CREATE_USERS_V4", "USER", "CREATE"],
    ["CREATE_API_ONLY_USERS", "USER", "CREATE"],
    ["DELETE_USERS", "USER", "DELETE"],
    ["UPDATE_USER_NAME", "USER", "UPDATE"],
    ["CREATE_USER_TAG", "USER", "CREATE"],
    ["DELETE_USER_TAGS", "USER", "DELETE"],
    ["CREATE_POLICY_V3", "POLICY", "CREATE"],
    ["CREATE_POLICIES", "POLICY", "CREATE"],
    ["UPDATE_POLICY_V2", "POLICY", "UPDATE"],
    ["DELETE_POLICY", "POLICY", "DELETE"],
    ["CREATE_API_KEYS_V2", "CREDENTIAL", "CREATE"],
    ["DELETE_API_KEYS", "CREDENTIAL", "DELETE"],
    ["CREATE_AUTHENTICATORS_V2", "CREDENTIAL", "CREATE"],
    ["CREATE_SUB_ORGANIZATION_V8", "ORGANIZATION", "CREATE"],
    ["DELETE_SUB_ORGANIZATION", "ORGANIZATION", "DELETE"],
    ["STAMP_LOGIN", "AUTH", "CREATE"],
    ["OTP_LOGIN_V2", "AUTH", "CREATE"],
    ["OAUTH_LOGIN", "AUTH", "CREATE"],
    ["CREATE_READ_WRITE_SESSION_V2", "AUTH", "CREATE"],
    ["INIT_OTP_V3", "OTP", "CREATE"],
    ["VERIFY_OTP_V2", "OTP", "VERIFY"],
    ["CREATE_WEBHOOK_ENDPOINT", "WEBHOOK_ENDPOINT", "CREATE"],
    ["DELETE_WEBHOOK_ENDPOINT", "WEBHOOK_ENDPOINT", "DELETE"],
    ["CREATE_WALLET", "WALLET", "CREATE"],
    ["CREATE_TVC_APP", "TVC_APP", "CREATE"],
    ["CREATE_MFA_POLICY", "MFA_POLICY", "CREATE"],
    ["DELETE_MFA_POLICY", "MFA_POLICY", "DELETE"],
    ["SET_IP_ALLOWLIST", "CONFIG", "UPDATE"],
  ] as const
).map(([t, resource, action]) => {
  const type = `ACTIVITY_TYPE_${t}`;
  return { type, kind: activityKind(type), resource, action };
});
// Activities no generated policy can name (resources outside CATALOG, actions other than DELETE):
// random requests include them so that every size has implicit denies.
const UNPOLICED: Activity[] = [
  ["CREATE_SMART_CONTRACT_INTERFACE", "SMART_CONTRACT_INTERFACE", "CREATE"],
  ["CREATE_PRIVATE_KEYS_V2", "PRIVATE_KEY", "CREATE"],
  ["ACTIVATE_BILLING_TIER", "SUBSCRIPTION", "CREATE"],
].map(([t, resource, action]) => ({
  type: `ACTIVITY_TYPE_${t}`,
  kind: activityKind(`ACTIVITY_TYPE_${t}`),
  resource: resource!,
  action: action!,
}));
const DELETES = CATALOG.filter((a) => a.action === "DELETE");
const RESOURCES = [...new Set(CATALOG.map((a) => a.resource))];

/** One expression in both languages. Values are [A-Z0-9_-] only, so no escaping is needed. */
interface Both {
  sigil: string;
  cedar: string;
}
const and = (a: Both, b: Both): Both => ({ sigil: `${a.sigil} && ${b.sigil}`, cedar: `${a.cedar} && ${b.cedar}` });
const eq = (field: keyof Activity, v: string): Both => ({ sigil: `activity.${field} == '${v}'`, cedar: `context.${field} == "${v}"` });
const oneOf = (field: keyof Activity, vs: string[]): Both => ({
  sigil: `activity.${field} in [${vs.map((v) => `'${v}'`).join(", ")}]`,
  cedar: `[${vs.map((v) => `"${v}"`).join(", ")}].contains(context.${field})`,
});
const byId = (id: string): Both => ({
  sigil: `approvers.any(user, user.id == '${id}')`,
  cedar: `context.approvers.contains(User::"${id}")`,
});
const byTag = (tag: string): Both => ({
  sigil: `approvers.any(user, user.tags.contains('${tag}'))`,
  cedar: `context.approverTags.contains("${tag}")`,
});
const bothIds = (a: string, b: string): Both => ({
  sigil: `approvers.any(u, u.id == '${a}') && approvers.any(u, u.id == '${b}')`,
  cedar: `context.approvers.containsAll([User::"${a}", User::"${b}"])`,
});
// Cedar cannot count the members of a set that satisfy a predicate: the request carries, per tag,
// how many approvers hold it (context.tagCounts), and the policy compares that count.
const twoTagged = (tag: string): Both => ({
  sigil: `approvers.filter(u, u.tags.contains('${tag}')).count() >= 2`,
  cedar: `context.tagCounts has "${tag}" && context.tagCounts["${tag}"] >= 2`,
});

export interface GenPolicy {
  source: PolicySource;
  cedar: string;
  /** An activity the condition matches, and approvers who satisfy the consensus. */
  seed: Activity;
  witnesses: UserFacts[];
}

export interface Org {
  size: number;
  users: UserFacts[];
  policies: GenPolicy[];
  requests: DecisionInput[];
}

/** One organization: `size` policies in both languages, its users, and `requests` requests to decide. */
export function generateOrg(size: number, rng: Rng, requestCount: number): Org {
  const tags = Array.from({ length: Math.max(4, size / 20) }, () => rng.uuid());
  const restricted = tags.slice(0, 2); // the tags DENY policies name
  const users: UserFacts[] = Array.from({ length: Math.max(8, size / 5) }, (_, i) => {
    const own = new Set<string>();
    for (let n = rng.int(3); n > 0; n--) own.add(rng.pick(tags));
    return { id: rng.uuid(), tags: [...own], email: `user${i}@example.com`, alias: `user${i}` };
  });
  const holders = (tag: string) => users.filter((u) => u.tags.includes(tag));
  const multiHeld = tags.filter((t) => holders(t).length >= 2);
  const heldRestricted = restricted.filter((t) => holders(t).length >= 1);

  const policies: GenPolicy[] = [];
  for (let i = 0; i < size; i++) {
    const id = rng.uuid();
    const deny = heldRestricted.length > 0 && rng.next() < 0.1;
    let seed: Activity;
    let condition: Both;
    let consensus: Both;
    let witnesses: UserFacts[];
    if (deny) {
      seed = rng.pick(DELETES);
      condition = rng.next() < 0.5 ? eq("action", "DELETE") : and(eq("resource", seed.resource), eq("action", "DELETE"));
      const tag = rng.pick(heldRestricted);
      consensus = byTag(tag);
      witnesses = [rng.pick(holders(tag))];
    } else {
      seed = rng.pick(CATALOG);
      const c = rng.next();
      if (c < 0.35) condition = and(eq("resource", seed.resource), eq("action", seed.action));
      else if (c < 0.6) condition = eq("type", seed.type);
      else if (c < 0.85) condition = oneOf("kind", [seed.kind, rng.pick(CATALOG).kind]);
      else condition = and(oneOf("resource", [seed.resource, rng.pick(RESOURCES)]), eq("action", seed.action));
      const k = rng.next();
      if (k < 0.5) {
        const u = rng.pick(users);
        consensus = byId(u.id);
        witnesses = [u];
      } else if (k < 0.8 || multiHeld.length === 0) {
        const u = rng.pick(users.filter((x) => x.tags.length > 0));
        const tag = rng.pick(u.tags);
        consensus = byTag(tag);
        witnesses = [u];
      } else if (k < 0.9) {
        const a = rng.pick(users);
        const b = rng.pick(users.filter((x) => x !== a));
        consensus = bothIds(a.id, b.id);
        witnesses = [a, b];
      } else {
        const tag = rng.pick(multiHeld);
        const hs = holders(tag);
        const a = rng.pick(hs);
        consensus = twoTagged(tag);
        witnesses = [a, rng.pick(hs.filter((x) => x !== a))];
      }
    }
    const effect = deny ? "EFFECT_DENY" : "EFFECT_ALLOW";
    policies.push({
      source: { id, effect, condition: condition.sigil, consensus: consensus.sigil, time: "" },
      cedar: `${deny ? "forbid" : "permit"}(principal, action, resource) when { (${condition.cedar}) && (${consensus.cedar}) };`,
      seed,
      witnesses,
    });
  }

  // Requests rotate through three shapes: aimed at an ALLOW policy (its witnesses, sometimes one
  // short, plus maybe a bystander), aimed at a DENY policy, and random.
  const allows = policies.filter((p) => p.source.effect === "EFFECT_ALLOW");
  const denies = policies.filter((p) => p.source.effect === "EFFECT_DENY");
  const requests: DecisionInput[] = [];
  for (let i = 0; i < requestCount; i++) {
    const shape = i % 3 === 1 && denies.length === 0 ? 2 : i % 3;
    let activity: Activity;
    let approvers: UserFacts[];
    if (shape === 2) {
      activity = rng.next() < 0.15 ? rng.pick(UNPOLICED) : rng.pick(CATALOG);
      approvers = [];
    } else {
      const p = rng.pick(shape === 0 ? allows : denies);
      activity = p.seed;
      approvers = p.witnesses.length > 1 && rng.next() < 0.25 ? p.witnesses.slice(0, 1) : [...p.witnesses];
    }
    for (let n = shape === 2 ? 1 + rng.int(3) : rng.int(2); n > 0 && approvers.length < 3; n--) {
      const u = rng.pick(users);
      if (!approvers.includes(u)) approvers.push(u);
    }
    requests.push({
      activity: { ...activity, params: {} },
      rootOnly: false,
      quorum: { userIds: new Set([rng.uuid()]), threshold: 1 }, // no approver is root: policies decide
      approvers,
      credentials: [],
      rejection: false,
      implicitlyAllowed: false,
      nowMs: Date.UTC(2026, 2, 10, 12),
    });
  }
  return { size, users, policies, requests };
}

// ------------------------------------------------------------------------------ Cedar side

const user = (id: string) => ({ __entity: { type: "User", id } });

/** The Cedar request equivalent to one of ours: approvers are User entities (tags a Set). */
export function cedarCall(setId: string, input: DecisionInput): cedar.StatefulAuthorizationCall {
  const tagCounts: Record<string, number> = {};
  for (const u of input.approvers) for (const t of new Set(u.tags)) tagCounts[t] = (tagCounts[t] ?? 0) + 1;
  const { type, kind, resource, action } = input.activity;
  return {
    principal: { type: "User", id: input.approvers[0]!.id }, // the submitter
    action: { type: "Action", id: "DecideActivity" },
    resource: { type: "Activity", id: "activity" },
    context: {
      type,
      kind,
      resource,
      action,
      approvers: input.approvers.map((u) => user(u.id)),
      approverTags: Object.keys(tagCounts),
      tagCounts,
    },
    preparsedPolicySetId: setId,
    entities: input.approvers.map((u) => ({
      uid: { type: "User", id: u.id },
      attrs: { tags: [...u.tags], email: u.email, alias: u.alias },
      parents: [],
    })),
  };
}

export function cedarDecide(call: cedar.StatefulAuthorizationCall): cedar.Response {
  const r = cedar.statefulIsAuthorized(call);
  if (r.type !== "success") throw new Error(`cedar: ${r.errors.map((e) => e.message).join("; ")}`);
  return r.response;
}

/** Loads the organization's policies into Cedar as a pre-parsed set named `setId`. */
export function preparseCedarSet(org: Org, setId: string): void {
  const staticPolicies = Object.fromEntries(org.policies.map((p) => [p.source.id, p.cedar]));
  const parsed = cedar.preparsePolicySet(setId, { staticPolicies });
  if (parsed.type !== "success") throw new Error(`cedar could not parse the ${org.size}-policy set: ${JSON.stringify(parsed.errors)}`);
}

// ------------------------------------------------------------------------------ agreement

export interface Disagreement {
  request: number;
  input: DecisionInput;
  sigil: Decision;
  cedar: cedar.Response;
}

export interface Agreement {
  agree: number;
  disagreements: Disagreement[];
  /** Sigil's outcomes over the requests (REQUIRES_CONSENSUS is "not allowed": Cedar denies). */
  tally: { allow: number; denyExplicit: number; denyImplicit: number; requiresConsensus: number };
}

const sameIds = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

/**
 * Decides every request of the organization with both engines (`calls[i]` is Cedar's form of
 * request i, against a set loaded by preparseCedarSet). They agree when neither reports an
 * error, both allow or both do not, and they name the same determining policies: Cedar's
 * diagnostics.reason lists the satisfied permits when it allows, the satisfied forbids when it
 * denies.
 */
export function compareWithCedar(org: Org, set: PolicySet, calls: readonly cedar.StatefulAuthorizationCall[]): Agreement {
  const result: Agreement = { agree: 0, disagreements: [], tally: { allow: 0, denyExplicit: 0, denyImplicit: 0, requiresConsensus: 0 } };
  org.requests.forEach((input, i) => {
    const ours = decide(set, input);
    const theirs = cedarDecide(calls[i]!);
    const ids = (o: string) => ours.policies.filter((p) => p.outcome === o).map((p) => p.policyId);
    const errors = ours.policies.filter((p) => p.outcome === "OUTCOME_ERROR").length + theirs.diagnostics.errors.length;
    const allowed = ours.outcome === "OUTCOME_ALLOW";
    const ok =
      errors === 0 &&
      allowed === (theirs.decision === "allow") &&
      sameIds(allowed ? ids("OUTCOME_ALLOW") : ids("OUTCOME_DENY_EXPLICIT"), theirs.diagnostics.reason);
    if (ok) result.agree++;
    else result.disagreements.push({ request: i, input, sigil: ours, cedar: theirs });
    if (ours.outcome === "OUTCOME_ALLOW") result.tally.allow++;
    else if (ours.outcome === "OUTCOME_DENY_EXPLICIT") result.tally.denyExplicit++;
    else if (ours.outcome === "OUTCOME_DENY_IMPLICIT") result.tally.denyImplicit++;
    else result.tally.requiresConsensus++;
  });
  return result;
}
