// End-to-end: policy evaluation is bounded (docs/policy-language.md §11), on a real server
// process and through @turnkey/sdk-server. An end user — root of her own sub-organization,
// the tenant treated as hostile — cannot store the reported 10^8-iteration policy (400, the
// static bound), and the nastiest policy she can store (at the static bound, its predicate as
// long as the 8,192-character limit allows: seconds of CPU without a budget) neither blocks
// the server nor allows anything: the next activity in her organization is decided in
// milliseconds — hers allowed by her root quorum with the policy recorded OUTCOME_ERROR, her
// API user's refused with 403 naming the budget — while /healthz keeps answering.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Turnkey, TurnkeyRequestError, type TurnkeyApiClient } from "@turnkey/sdk-server";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { literalList, nestedAll } from "../helpers/policy-facts.ts";

const COMPLETED = "ACTIVITY_STATUS_COMPLETED";
const PERMISSION_ERROR = "type.googleapis.com/errors.v1.PolicyEnginePermissionError";
const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";
const MAX_CHARS = 8192;

/**
 * ALLOW, true for every activity, 100 + 100 × 999 = 100,000 iterations (the default bound) of a
 * predicate of ~8 KB: each iteration evaluates every clause (no short-circuit).
 */
function nastiestLegal(): string {
  const head = `${literalList(100)}.all(a, ${literalList(999)}.all(b, `;
  const clauses: string[] = ["true"];
  for (let i = 0; ; i++) {
    const next = `(a == ${i} || b == ${i})`;
    if (head.length + [...clauses, next].join(" || ").length + 2 > MAX_CHARS) break;
    clauses.push(next);
  }
  return `${head}${clauses.join(" || ")}))`;
}

const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;
const sdkFor = (url: string, key: P256KeyPair, organizationId: string): TurnkeyApiClient =>
  new Turnkey({
    apiBaseUrl: url,
    apiPublicKey: key.publicKey,
    apiPrivateKey: key.privateKey,
    defaultOrganizationId: organizationId,
  }).apiClient();

async function failure(p: Promise<unknown>): Promise<TurnkeyRequestError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof TurnkeyRequestError, `expected a TurnkeyRequestError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected the request to fail");
}

/** Polls /healthz back to back while `work` runs; returns the slowest answer (ms) and how many came back. */
async function healthWhile<T>(url: string, work: Promise<T>): Promise<{ result: T; worstMs: number; answers: number }> {
  let done = false;
  let worstMs = 0;
  let answers = 0;
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      worstMs = Math.max(worstMs, performance.now() - t0);
      answers++;
    }
  })();
  let result: T;
  try {
    result = await work;
  } finally {
    done = true;
    // The request in flight when the work ended counts too: it is the one a blocked loop delays.
    await poller;
  }
  return { result, worstMs, answers };
}

for (const engine of engines()) {
  describe(`policy evaluation bounds (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let init: InitResult;
    let server: RunningServer;
    let subOrgId: string;
    let alice: TurnkeyApiClient;
    let bob: TurnkeyApiClient;

    before(async () => {
      inst = await newInstance(engine.name);
      init = await sigilInit(inst);
      server = await startServer(inst);
      const backend = sdkFor(server.url, { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }, init.organizationId);
      const aliceKey = generateP256KeyPair();
      const sub = await backend.createSubOrganization({
        subOrganizationName: uniq("tenant"),
        rootUsers: [
          {
            userName: "alice",
            apiKeys: [{ apiKeyName: "alice-key", publicKey: aliceKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        rootQuorumThreshold: 1,
      });
      subOrgId = sub.subOrganizationId;
      alice = sdkFor(server.url, aliceKey, subOrgId);
      // Her API user, outside her root quorum: what the policies alone decide for.
      const bobKey = generateP256KeyPair();
      const users = await alice.createUsers({
        users: [
          {
            userName: "bob",
            apiKeys: [{ apiKeyName: "bob-key", publicKey: bobKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      });
      assert.equal(users.activity.status, COMPLETED);
      bob = sdkFor(server.url, bobKey, subOrgId);
    });

    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("create_policy refuses the reported policy (400 naming the field and the bound), and stores nothing", async () => {
      const err = await failure(
        alice.createPolicy({
          policyName: uniq("reported"),
          effect: "EFFECT_ALLOW",
          condition: nestedAll(100, 4),
          consensus: "",
          notes: "",
        }),
      );
      assert.equal(err.code, 3, err.message);
      assert.match(
        err.message,
        /invalid policy condition: .*up to 101010100 lambda iterations .*the bound is 100000 \(SIGIL_POLICY_MAX_ITERATIONS/,
      );
      const fields = (err.details ?? []).flatMap((d) =>
        (d["@type"] === BAD_REQUEST ? (d.fieldViolations as { field: string }[]) : []).map((v) => v.field),
      );
      assert.deepEqual(fields, ["parameters.condition"]);
      assert.deepEqual((await alice.getPolicies({})).policies, []);
    });

    it("the nastiest legal policy: the next activities are decided at once, fail closed, and /healthz keeps answering", async (t) => {
      const condition = nastiestLegal();
      assert.ok(condition.length <= MAX_CHARS && condition.length > 8000, String(condition.length));
      const created = await alice.createPolicy({ policyName: uniq("nasty"), effect: "EFFECT_ALLOW", condition, consensus: "", notes: "" });
      assert.equal(created.activity.status, COMPLETED);
      const policyId = created.policyId;

      // Bob's activity: only the policy could allow it. Unbounded it would, after seconds of CPU.
      const t0 = performance.now();
      const refused = await healthWhile(server.url, failure(bob.createUserTag({ userTagName: uniq("tag"), userIds: [] })));
      const bobMs = performance.now() - t0;
      const err = refused.result;
      assert.equal(err.code, 7, err.message);
      assert.match(
        err.message,
        new RegExp(`policy ${policyId} could not be evaluated \\(condition: evaluation budget of 100000 steps exceeded\\)`),
      );
      const detail = (err.details ?? []).find((d) => d["@type"] === PERMISSION_ERROR) as
        { activityId: string; policyEvaluations: { policyId: string; outcome: string }[] } | undefined;
      assert.ok(detail, err.message);
      assert.deepEqual(detail.policyEvaluations, [{ policyId, outcome: "OUTCOME_ERROR" }]);
      // The refused activity is recorded FAILED, its failure naming the budget.
      const { activity: failed } = await alice.getActivity({ activityId: detail.activityId });
      assert.equal(failed.status, "ACTIVITY_STATUS_FAILED");
      assert.match(JSON.stringify(failed.failure), /evaluation budget of 100000 steps exceeded/);
      const records = (await alice.getPolicyEvaluations({ activityId: detail.activityId })).policyEvaluations;
      assert.equal(records.length, 1);
      assert.deepEqual(
        records[0]!.policyEvaluations.map((e) => [e.policyId ?? null, e.outcome]),
        [
          [policyId, "OUTCOME_ERROR"],
          [null, "OUTCOME_DENY_IMPLICIT"],
        ],
      );
      // Bounded: milliseconds of evaluation. The limits are generous for a loaded 2-core machine;
      // unbounded the pass takes seconds.
      assert.ok(bobMs < 1500, `bob's activity took ${bobMs.toFixed(0)} ms`);
      assert.ok(
        refused.answers >= 1 && refused.worstMs < 1000,
        `/healthz: ${refused.answers} answers, slowest ${refused.worstMs.toFixed(0)} ms`,
      );

      // Alice's own activity: her root quorum decides it; the policy is still recorded as cut short.
      const t1 = performance.now();
      const mine = await healthWhile(server.url, alice.createUserTag({ userTagName: uniq("tag"), userIds: [] }));
      const aliceMs = performance.now() - t1;
      assert.equal(mine.result.activity.status, COMPLETED);
      const mineRecords = (await alice.getPolicyEvaluations({ activityId: mine.result.activity.id })).policyEvaluations;
      assert.deepEqual(
        mineRecords[0]!.policyEvaluations.map((e) => [e.policyId ?? null, e.outcome]),
        [
          [policyId, "OUTCOME_ERROR"],
          [null, "OUTCOME_ALLOW"],
        ],
      );
      t.diagnostic(
        `bob ${bobMs.toFixed(0)} ms (/healthz ${refused.answers} answers, slowest ${refused.worstMs.toFixed(0)} ms); alice ${aliceMs.toFixed(0)} ms (/healthz slowest ${mine.worstMs.toFixed(0)} ms)`,
      );
      assert.ok(aliceMs < 1500, `alice's activity took ${aliceMs.toFixed(0)} ms`);
      assert.ok(mine.worstMs < 1000, `/healthz: slowest ${mine.worstMs.toFixed(0)} ms`);
    });
  });
}
