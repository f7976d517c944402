import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  completed,
  conflict,
  forbidden,
  invalidRequest,
  perEngine,
  UUID,
  type Creds,
  type Json,
} from "../helpers/inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { createApp, newApp, newOperators, operatorParams, quorumKey, uniqueName, TVC } from "../helpers/tvc.ts";
import { createTvcApp } from "../../src/activities/tvc/create_tvc_app.ts";

const OP = "create_tvc_app";

perEngine(
  OP,
  (h) => {
    it("TVC is for top-level organizations only: a sub-organization's own root user is refused (403, code 7) and nothing is recorded (docs/tvc-isolation.md §1)", async () => {
      const key = generateP256KeyPair();
      const sdk = await h().sdk();
      const sub = await sdk.createSubOrganization({
        subOrganizationName: "tvc-sub",
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: "sub-root",
            apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
      });
      const subRoot: Creds = { organizationId: sub.subOrganizationId, userId: sub.rootUserIds![0]!, key };
      const params = {
        name: "app",
        quorumPublicKey: quorumKey(),
        manifestSetParams: { name: "m", newOperators: operatorParams(newOperators(1)), threshold: 1 },
        shareSetParams: { name: "s", newOperators: operatorParams(newOperators(2)), threshold: 2 },
      };
      forbidden(await createApp(h(), params, subRoot), /TVC is not enabled for organization/);
      // Refused before its parameters are read: an invalid request gets the same answer.
      forbidden(await createApp(h(), { name: "" }, subRoot), /TVC is not enabled for organization/);
      assert.deepEqual((await h().query("list_tvc_apps", {}, { as: subRoot })).json.tvcApps, []);
      const acts = (await h().query("list_activities", {}, { as: subRoot })).json.activities as Json[];
      assert.deepEqual(
        acts.filter((a) => /TVC/.test(a.type)),
        [],
        "no activity recorded",
      );
    });

    it("a new 2-of-3 manifest set and 2-of-2 share set through the official SDK: all seven result fields", async () => {
      const org = await h().newOrg("tvc-create");
      const ops = newOperators(3);
      const sharers = newOperators(2);
      const sdk = await h().sdk(org);
      const r = await sdk.createTvcApp({
        name: "tiny",
        quorumPublicKey: quorumKey(),
        manifestSetParams: { name: "manifest", newOperators: operatorParams(ops), threshold: 2 },
        shareSetParams: { name: "share", newOperators: operatorParams(sharers), threshold: 2 },
      });
      assert.match(r.appId, UUID);
      assert.match(r.manifestSetId, UUID);
      assert.equal(r.manifestSetOperatorIds.length, 3);
      assert.equal(r.manifestSetThreshold, 2);
      assert.match(r.shareSetId, UUID);
      assert.notEqual(r.shareSetId, r.manifestSetId);
      assert.equal(r.shareSetOperatorIds.length, 2);
      assert.equal(r.shareSetThreshold, 2);
      const app = (await h().query("get_tvc_app", { tvcAppId: r.appId }, { as: org })).json.tvcApp;
      assert.equal(app.enableEgress, false, "enableEgress defaults to false");
      assert.deepEqual(
        app.manifestSet.operators.map((o: Json) => o.id),
        r.manifestSetOperatorIds,
      );
      assert.deepEqual(
        app.manifestSet.operators.map((o: Json) => o.publicKey),
        ops.map((o) => o.key.publicCompressed),
      );
    });

    it("identical sets are reused (keys given uncompressed are the same operators); existing ids and set ids build on them", async () => {
      const org = await h().newOrg("tvc-reuse");
      const ops = newOperators(3);
      const sharers = newOperators(2);
      const params = (name: string, encoding: "publicCompressed" | "publicUncompressed", threshold: number | string = 2): Json => ({
        name,
        quorumPublicKey: quorumKey(),
        manifestSetParams: { name: "m", newOperators: ops.map((o) => ({ name: o.name, publicKey: o.key[encoding] })), threshold },
        shareSetParams: { name: "s", newOperators: operatorParams(sharers), threshold: 2 },
      });
      const a = completed(await createApp(h(), params("a", "publicCompressed"), org), createTvcApp);
      // Threshold as a numeric string (int64 as protojson renders it); keys uncompressed.
      const b = completed(await createApp(h(), params("b", "publicUncompressed", "2"), org), createTvcApp);
      assert.equal(b.manifestSetId, a.manifestSetId);
      assert.deepEqual(b.manifestSetOperatorIds, a.manifestSetOperatorIds);
      assert.equal(b.shareSetId, a.shareSetId);
      // Another threshold is another set, over the same operators.
      const c = completed(await createApp(h(), params("c", "publicCompressed", 3), org), createTvcApp);
      assert.notEqual(c.manifestSetId, a.manifestSetId);
      assert.deepEqual([...c.manifestSetOperatorIds].sort(), [...a.manifestSetOperatorIds].sort());
      // Existing operators by id, mixed with a new one; existing sets by id.
      const extra = newOperators(1);
      const d = completed(
        await createApp(
          h(),
          {
            name: "d",
            quorumPublicKey: quorumKey(),
            manifestSetParams: {
              name: "mixed",
              existingOperatorIds: a.manifestSetOperatorIds.slice(0, 2),
              newOperators: operatorParams(extra),
              threshold: 3,
            },
            shareSetId: a.shareSetId,
            enableEgress: true,
          },
          org,
        ),
        "createTvcAppResult",
      );
      assert.deepEqual(d.manifestSetOperatorIds.slice(0, 2), a.manifestSetOperatorIds.slice(0, 2));
      assert.equal(d.manifestSetOperatorIds.length, 3);
      assert.equal(d.shareSetId, a.shareSetId);
      assert.equal(d.shareSetThreshold, 2);
      const e = completed(
        await createApp(h(), { name: "e", quorumPublicKey: quorumKey(), manifestSetId: d.manifestSetId, shareSetId: a.shareSetId }, org),
        createTvcApp,
      );
      assert.equal(e.manifestSetThreshold, 3);
      const apps = (await h().query("list_tvc_apps", {}, { as: org })).json.tvcApps as Json[];
      assert.deepEqual(
        apps.map((x) => x.name),
        ["a", "b", "c", "d", "e"],
      );
      assert.equal(apps[3]!.enableEgress, true);
    });

    it("a new operator whose key the organization has under another name is refused; the same name reuses it", async () => {
      const org = await h().newOrg("tvc-names");
      const [op] = newOperators(1);
      const sharers = operatorParams(newOperators(2));
      const base = (name: string, opName: string): Json => ({
        name,
        quorumPublicKey: quorumKey(),
        manifestSetParams: { name: "m", newOperators: [{ name: opName, publicKey: op!.key.publicCompressed }], threshold: 1 },
        shareSetParams: { name: "s", newOperators: sharers, threshold: 2 },
      });
      const first = completed(await createApp(h(), base("one", "alice"), org), createTvcApp);
      invalidRequest(await createApp(h(), base("two", "bob"), org), /already has this key.*alice/, [
        "parameters.manifestSetParams.newOperators[0].publicKey",
      ]);
      // The operator listed twice, once by id and once by key.
      const twice = {
        ...base("three", "alice"),
        manifestSetParams: {
          name: "m2",
          existingOperatorIds: first.manifestSetOperatorIds,
          newOperators: [{ name: "alice", publicKey: op!.key.publicUncompressed }],
          threshold: 1,
        },
      };
      invalidRequest(await createApp(h(), twice, org), /already in the set/, ["parameters.manifestSetParams.newOperators[0].publicKey"]);
    });

    it("bad combinations, ids, thresholds, keys and sizes are 400 naming the field; a duplicate name is 409", async () => {
      const org = await h().newOrg("tvc-invalid");
      const other = await h().newOrg("tvc-foreign");
      const foreign = await newApp(h(), other);
      const ops = operatorParams(newOperators(3));
      const sharers = operatorParams(newOperators(2));
      const good = (): Json => ({
        name: uniqueName("x"),
        quorumPublicKey: quorumKey(),
        manifestSetParams: { name: "m", newOperators: ops, threshold: 2 },
        shareSetParams: { name: "s", newOperators: sharers, threshold: 2 },
      });
      const cases: [string, Json, RegExp, string][] = [
        ["both id and params", { ...good(), manifestSetId: foreign.manifestSetId }, /not both/, "parameters.manifestSetId"],
        [
          "neither id nor params",
          { ...good(), shareSetParams: undefined },
          /give shareSetId or shareSetParams/,
          "parameters.shareSetParams",
        ],
        [
          "an id that is not a UUID",
          { ...good(), manifestSetParams: undefined, manifestSetId: "nope" },
          /UUID/,
          "parameters.manifestSetId",
        ],
        [
          "another organization's set",
          { ...good(), manifestSetParams: undefined, manifestSetId: foreign.manifestSetId },
          /no operator set/,
          "parameters.manifestSetId",
        ],
        [
          "an unknown operator id",
          { ...good(), manifestSetParams: { name: "m", existingOperatorIds: [crypto.randomUUID()], threshold: 1 } },
          /no operator/,
          "parameters.manifestSetParams.existingOperatorIds[0]",
        ],
        [
          "another organization's operator",
          {
            ...good(),
            manifestSetParams: { name: "m", newOperators: ops, existingOperatorIds: [foreign.manifestSetOperatorIds[1]], threshold: 1 },
          },
          /no operator/,
          "parameters.manifestSetParams.existingOperatorIds[0]",
        ],
        [
          "threshold 0",
          { ...good(), manifestSetParams: { name: "m", newOperators: ops, threshold: 0 } },
          /from 1 to the number of operators \(3\)/,
          "parameters.manifestSetParams.threshold",
        ],
        [
          "threshold above the members",
          { ...good(), manifestSetParams: { name: "m", newOperators: ops, threshold: "4" } },
          /from 1/,
          "parameters.manifestSetParams.threshold",
        ],
        [
          "a share set of threshold 1",
          { ...good(), shareSetParams: { name: "s", newOperators: sharers, threshold: 1 } },
          /at least 2/,
          "parameters.shareSetParams.threshold",
        ],
        [
          "a threshold that is no number",
          { ...good(), manifestSetParams: { name: "m", newOperators: ops, threshold: "two" } },
          /integer/,
          "parameters.manifestSetParams.threshold",
        ],
        [
          "an empty set",
          { ...good(), manifestSetParams: { name: "m", threshold: 1 } },
          /at least one operator/,
          "parameters.manifestSetParams.newOperators",
        ],
        [
          "one key twice in a set",
          { ...good(), manifestSetParams: { name: "m", newOperators: [ops[0], { ...ops[0], name: "again" }], threshold: 1 } },
          /same key/,
          "parameters.manifestSetParams.newOperators[1].publicKey",
        ],
        [
          "one id twice in a set",
          { ...good(), manifestSetParams: { name: "m", existingOperatorIds: [foreign.appId, foreign.appId], threshold: 1 } },
          /same operator/,
          "parameters.manifestSetParams.existingOperatorIds[1]",
        ],
        [
          "a malformed operator key",
          { ...good(), manifestSetParams: { name: "m", newOperators: [{ name: "x", publicKey: "04abcd" }], threshold: 1 } },
          /public key/,
          "parameters.manifestSetParams.newOperators[0].publicKey",
        ],
        [
          "a key off the curve",
          { ...good(), quorumPublicKey: "02" + "f".repeat(64) },
          /not a valid point|public key/,
          "parameters.quorumPublicKey",
        ],
        ["a non-hex quorum key", { ...good(), quorumPublicKey: "zz" }, /hex/, "parameters.quorumPublicKey"],
        [
          "51 operators",
          { ...good(), manifestSetParams: { name: "m", newOperators: operatorParams(newOperators(51)), threshold: 1 } },
          /at most 50/,
          "parameters.manifestSetParams.newOperators",
        ],
      ];
      for (const [what, parameters, message, field] of cases) {
        const res = await createApp(h(), parameters, org);
        assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.json)}`);
        invalidRequest(res, message, [field]);
      }
      const taken = good();
      completed(await createApp(h(), taken, org), createTvcApp);
      conflict(await createApp(h(), { ...taken, quorumPublicKey: quorumKey() }, org), /already exists/);
      assert.equal((await h().query("list_tvc_apps", {}, { as: org })).json.tvcApps.length, 1, "nothing of the refused requests was kept");
    });

    it("concurrent creations with the same new sets share one set and one operator per key", async () => {
      const org = await h().newOrg("tvc-race");
      const ops = operatorParams(newOperators(3));
      const sharers = operatorParams(newOperators(2));
      const params = (name: string): Json => ({
        name,
        quorumPublicKey: quorumKey(),
        manifestSetParams: { name: "m", newOperators: ops, threshold: 2 },
        shareSetParams: { name: "s", newOperators: sharers, threshold: 2 },
      });
      const results = await Promise.all(["r1", "r2", "r3", "r4"].map((n) => createApp(h(), params(n), org)));
      const sets = new Set(results.map((r) => completed(r, createTvcApp).manifestSetId));
      assert.equal(sets.size, 1);
      const rows = await h()
        .service.store.db.selectFrom("tvc_operators")
        .select("id")
        .where("organization_id", "=", org.organizationId)
        .execute();
      assert.equal(rows.length, 5);
      // The same name at once: one app, the others 409.
      const same = await Promise.all([1, 2, 3].map(() => createApp(h(), params("same"), org)));
      assert.deepEqual(same.map((r) => r.status).sort(), [200, 409, 409]);
    });

    it("policies govern it (TVC_APP / CREATE / CREATE_TVC_APP)", async () => {
      const org = await h().newOrg("tvc-policy");
      const [member] = await addUsersWithKeys(h(), 1, org);
      const params = (): Json => ({
        name: uniqueName("p"),
        quorumPublicKey: quorumKey(),
        manifestSetParams: { name: "m", newOperators: operatorParams(newOperators(1)), threshold: 1 },
        shareSetParams: { name: "s", newOperators: operatorParams(newOperators(2)), threshold: 2 },
      });
      forbidden(await createApp(h(), params(), member));
      completed(
        await h().submit(
          "create_policy",
          "ACTIVITY_TYPE_CREATE_POLICY_V3",
          {
            policyName: "tvc apps",
            effect: "EFFECT_ALLOW",
            condition: "activity.resource == 'TVC_APP' && activity.action == 'CREATE' && activity.kind == 'CREATE_TVC_APP'",
            consensus: "",
            notes: "",
          },
          { as: org },
        ),
        "createPolicyResult",
      );
      completed(await createApp(h(), params(), member), createTvcApp);
    });
  },
  undefined,
  TVC,
);

perEngine(`${OP} without SIGIL_TVC_IMAGE_ROOT`, (h) => {
  it("TVC is off: even a top-level organization is refused (403, code 7); the queries answer with empty lists", async () => {
    const params = {
      name: "app",
      quorumPublicKey: quorumKey(),
      manifestSetParams: { name: "m", newOperators: operatorParams(newOperators(1)), threshold: 1 },
      shareSetParams: { name: "s", newOperators: operatorParams(newOperators(2)), threshold: 2 },
    };
    forbidden(await createApp(h(), params), /TVC is not enabled for organization/);
    const list = await h().query("list_tvc_apps");
    assert.equal(list.status, 200);
    assert.deepEqual(list.json.tvcApps, []);
  });
});
