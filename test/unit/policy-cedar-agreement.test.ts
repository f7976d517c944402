// Sigil's policy engine and Cedar (@cedar-policy/cedar-wasm) decide alike on policy sets written
// in both languages (bench/policy-vs-cedar.ts, the generator and check bench:policy also uses):
// same allow/deny, and the same determining policies. Small sets and a few hundred requests, from
// seeds fast-check picks (a failure prints the seed that reproduces it).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { compilePolicy, policySet } from "../../src/policy/engine.ts";
import { cedarCall, compareWithCedar, generateOrg, preparseCedarSet, prng, type Agreement, type Org } from "../../bench/policy-vs-cedar.ts";

const REQUESTS_PER_ORG = 36;
const RUNS = 12;

/** A disagreement, with the policies involved written out, so it can be reproduced by hand. */
function describeDisagreement(org: Org, d: Agreement["disagreements"][number]): string {
  const named = new Set([
    ...d.sigil.policies.filter((p) => p.outcome !== "OUTCOME_DENY_IMPLICIT").map((p) => p.policyId),
    ...d.cedar.diagnostics.reason,
  ]);
  const policies = org.policies
    .filter((p) => named.has(p.source.id))
    .map(
      (p) =>
        `  ${p.source.id} ${p.source.effect}\n    sigil: condition ${p.source.condition} | consensus ${p.source.consensus}\n    cedar: ${p.cedar}`,
    );
  return [
    `request ${d.request}: activity ${JSON.stringify(d.input.activity)}, approvers ${JSON.stringify(d.input.approvers.map((u) => ({ id: u.id, tags: u.tags })))}`,
    `sigil: ${d.sigil.outcome} (${d.sigil.reason}) ${JSON.stringify(d.sigil.policies.filter((p) => p.outcome !== "OUTCOME_DENY_IMPLICIT"))}`,
    `cedar: ${d.cedar.decision}, reason ${JSON.stringify(d.cedar.diagnostics.reason)}, errors ${JSON.stringify(d.cedar.diagnostics.errors)}`,
    ...policies,
  ].join("\n");
}

describe("policy engine agrees with Cedar", () => {
  it(`on ${RUNS} generated organizations × ${REQUESTS_PER_ORG} requests`, () => {
    const total = { requests: 0, allow: 0, denyExplicit: 0, denyImplicit: 0, requiresConsensus: 0 };
    let run = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x7fffffff }), fc.constantFrom(4, 12, 40), (seed, size) => {
        const org = generateOrg(size, prng(seed), REQUESTS_PER_ORG);
        const setId = `agreement-${run++}`;
        preparseCedarSet(org, setId);
        const result = compareWithCedar(
          org,
          policySet(org.policies.map((p) => compilePolicy(p.source))),
          org.requests.map((r) => cedarCall(setId, r)),
        );
        const first = result.disagreements[0];
        assert.ok(
          first === undefined,
          first && `${result.disagreements.length} disagreement(s); the first:\n${describeDisagreement(org, first)}`,
        );
        assert.equal(result.agree, org.requests.length);
        total.requests += org.requests.length;
        for (const k of ["allow", "denyExplicit", "denyImplicit", "requiresConsensus"] as const) total[k] += result.tally[k];
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
    // Agreement means something only if both allows and each kind of deny were decided.
    assert.ok(total.allow > 0 && total.denyExplicit > 0 && total.denyImplicit > 0 && total.requiresConsensus > 0, JSON.stringify(total));
  });
});
