// A proposed policy set: the organization's policies with some added, updated and deleted
// (docs/policy-dry-run.md §4.1). Compiled as create_policy / update_policy compile them — the
// static cost bound included — and refused with a 400 naming the policy and the position of
// the first error. Policies the proposal leaves alone keep the compiled form the pipeline uses.
import { setImmediate as turn } from "node:timers/promises";
import { Type, type Static } from "@sinclair/typebox";
import { invalid } from "../errors.ts";
import { compilePolicy, policySet, type CompiledPolicy, type Effect, type PolicySet } from "../policy/engine.ts";
import { compileExpression, compileSubmitted, PolicyCompileError, type CompiledExpression, type Field } from "../policy/index.ts";
import { MAX_POLICIES_PER_ORGANIZATION, type PolicyRow } from "../store/policies.ts";
import type { OrgGovernance } from "../governance/governance.ts";
import type { PolicyMeta } from "./evaluation.ts";

/** As create_policy bounds them (activities/policies/policy-fields.ts). */
const MAX_EXPRESSION = 8192;
const Expression = (what: string) =>
  Type.String({ maxLength: MAX_EXPRESSION, errorMessage: `${what} must be a policy expression of at most ${MAX_EXPRESSION} characters` });
const Effect = Type.Union([Type.Literal("EFFECT_ALLOW"), Type.Literal("EFFECT_DENY")], {
  errorMessage: "must be EFFECT_ALLOW or EFFECT_DENY",
});
const Name = Type.String({ minLength: 1, maxLength: 256, errorMessage: "policyName must be 1 to 256 characters" });
const Notes = Type.String({ maxLength: 4096, errorMessage: "notes must be at most 4096 characters" });

const Added = Type.Object({
  policyName: Name,
  effect: Effect,
  condition: Type.Optional(Expression("condition")),
  consensus: Type.Optional(Expression("consensus")),
  time: Type.Optional(Expression("time")),
  notes: Type.Optional(Notes),
});
const Updated = Type.Object({
  policyId: Type.String({ maxLength: 64 }),
  policyName: Type.Optional(Name),
  effect: Type.Optional(Effect),
  condition: Type.Optional(Expression("condition")),
  consensus: Type.Optional(Expression("consensus")),
  time: Type.Optional(Expression("time")),
  notes: Type.Optional(Notes),
});

export const ProposalSchema = Type.Object({
  add: Type.Optional(
    Type.Array(Added, {
      maxItems: MAX_POLICIES_PER_ORGANIZATION,
      errorMessage: `proposal.add must hold at most ${MAX_POLICIES_PER_ORGANIZATION} policies`,
    }),
  ),
  update: Type.Optional(
    Type.Array(Updated, {
      maxItems: MAX_POLICIES_PER_ORGANIZATION,
      errorMessage: `proposal.update must hold at most ${MAX_POLICIES_PER_ORGANIZATION} policies`,
    }),
  ),
  delete: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: MAX_POLICIES_PER_ORGANIZATION,
      errorMessage: `proposal.delete must hold at most ${MAX_POLICIES_PER_ORGANIZATION} policy ids`,
    }),
  ),
});
export type Proposal = Static<typeof ProposalSchema>;

export interface ProposedSet {
  set: PolicySet;
  meta: Map<string, PolicyMeta>;
}

const metaOf = (r: Pick<PolicyRow, "id" | "name" | "effect" | "condition" | "consensus" | "time">): PolicyMeta => ({
  policyId: r.id,
  policyName: r.name,
  effect: r.effect,
  condition: r.condition,
  consensus: r.consensus,
  time: r.time,
});

/** Today's policies' labels and text, by id. */
export function todaysMeta(rows: readonly PolicyRow[]): Map<string, PolicyMeta> {
  return new Map(rows.map((r) => [r.id, metaOf(r)]));
}

/**
 * Today's set with the proposal applied: updated policies in place, deleted ones gone, added ones
 * last (ids "proposed-1", "proposed-2", … in proposal order). `rows` and `today` are the
 * organization's policies and their compiled set (the governance cache's).
 */
export async function proposedSet(rows: readonly PolicyRow[], today: OrgGovernance, proposal: Proposal): Promise<ProposedSet> {
  const known = new Map(rows.map((r) => [r.id, r]));
  const compiledToday = new Map(today.set.policies.map((p) => [p.id, p]));
  const deleted = new Set<string>();
  for (const [i, id] of (proposal.delete ?? []).entries()) {
    if (!known.has(id))
      throw invalid(`proposal.delete[${i}]: no policy ${JSON.stringify(id)} in this organization`, [
        { field: `proposal.delete[${i}]`, description: "unknown policy id" },
      ]);
    deleted.add(id);
  }
  const updates = new Map<string, { i: number; u: NonNullable<Proposal["update"]>[number] }>();
  for (const [i, u] of (proposal.update ?? []).entries()) {
    if (!known.has(u.policyId))
      throw invalid(`proposal.update[${i}]: no policy ${JSON.stringify(u.policyId)} in this organization`, [
        { field: `proposal.update[${i}].policyId`, description: "unknown policy id" },
      ]);
    if (deleted.has(u.policyId) || updates.has(u.policyId)) {
      throw invalid(`proposal.update[${i}]: policy ${u.policyId} is named twice in the proposal`, [
        { field: `proposal.update[${i}].policyId`, description: "named twice" },
      ]);
    }
    updates.set(u.policyId, { i, u });
  }
  const added = proposal.add ?? [];
  const size = rows.length - deleted.size + added.length;
  if (size > MAX_POLICIES_PER_ORGANIZATION) {
    throw invalid(`the proposed set holds ${size} policies; an organization holds at most ${MAX_POLICIES_PER_ORGANIZATION}`, [
      { field: "proposal.add", description: "too many policies" },
    ]);
  }

  const policies: CompiledPolicy[] = [];
  const meta = new Map<string, PolicyMeta>();
  for (const r of rows) {
    if (deleted.has(r.id)) continue;
    const change = updates.get(r.id);
    if (!change) {
      policies.push(
        compiledToday.get(r.id) ??
          compilePolicy({ id: r.id, effect: r.effect, condition: r.condition, consensus: r.consensus, time: r.time }),
      );
      meta.set(r.id, metaOf(r));
      continue;
    }
    const { i, u } = change;
    const next = {
      id: r.id,
      name: u.policyName ?? r.name,
      effect: u.effect ?? r.effect,
      condition: u.condition ?? r.condition,
      consensus: u.consensus ?? r.consensus,
      time: u.time ?? r.time,
    };
    policies.push(await compileProposed(next, `proposal.update[${i}]`, u));
    meta.set(r.id, metaOf(next));
  }
  for (const [i, a] of added.entries()) {
    const next = {
      id: `proposed-${i + 1}`,
      name: a.policyName,
      effect: a.effect,
      condition: a.condition ?? "",
      consensus: a.consensus ?? "",
      time: a.time ?? "",
    };
    policies.push(await compileProposed(next, `proposal.add[${i}]`, a));
    meta.set(next.id, metaOf(next));
  }
  return { set: policySet(policies), meta };
}

/** A proposal is a draft: it stays out of the shared compile cache (docs/policy-dry-run.md §6). */
const DRAFT = { cached: false } as const;
const FIELDS = ["condition", "consensus", "time"] as const;

/**
 * Compiles the fields the proposal writes as a submission (the static cost bound), each once and
 * uncached, the rest as stored. An 8 KiB expression compiles in about 10 ms: the event loop is
 * given back after each.
 */
async function compileProposed(
  p: { id: string; name: string; effect: Effect; condition: string; consensus: string; time: string },
  path: string,
  written: Partial<Record<Field, string>>,
): Promise<CompiledPolicy> {
  const compiled: Partial<Record<Field, CompiledExpression | null>> = {};
  for (const field of FIELDS) {
    if (written[field] === undefined) continue;
    await turn();
    try {
      compiled[field] = compileSubmitted(field, p[field], DRAFT);
    } catch (err) {
      if (!(err instanceof PolicyCompileError)) throw err;
      throw invalid(`${path} (${JSON.stringify(p.name)}): invalid policy ${field}: ${err.message}`, [
        { field: `${path}.${field}`, description: `line ${err.line}, column ${err.column} (offset ${err.offset}): ${err.problem}` },
      ]);
    }
  }
  const fieldOf = (field: Field): CompiledExpression | null => {
    if (field in compiled) return compiled[field] ?? null;
    try {
      return compileExpression(field, p[field]);
    } catch (err) {
      // A stored field the proposal keeps that no longer compiles (the language changed since).
      if (!(err instanceof PolicyCompileError)) throw err;
      throw invalid(`${path} (${JSON.stringify(p.name)}): its stored ${err.field} no longer compiles: ${err.message}`, [
        { field: `${path}.${err.field}`, description: err.problem },
      ]);
    }
  };
  return { id: p.id, effect: p.effect, condition: fieldOf("condition"), consensus: fieldOf("consensus"), time: fieldOf("time") };
}
