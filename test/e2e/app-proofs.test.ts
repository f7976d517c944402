// App proofs through the official clients: a submission with generateAppProofs carries a
// policy-outcome proof that @turnkey/crypto's verifyAppProofSignature and our library's
// verifyAppProof both accept; one more proof is appended when consensus settles it.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { verifyAppProofSignature } from "@turnkey/crypto";
import { verifyAppProof, type AppProof } from "@sigil/webhooks";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { partyFor, type Party } from "../helpers/policy-harness.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

const now = () => String(Date.now());

for (const engine of engines()) {
  describe(`app proofs (${engine.name})`, { skip: engine.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    let root: Party;
    let trusted: string[];

    before(async () => {
      inst = await newInstance(engine.name);
      init = await sigilInit(inst);
      server = await startServer(inst);
      root = partyFor(server.url, { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }, init.userId, init.organizationId);
      const res = await fetch(`${server.url}/public/v1/discovery/app-proofs/keys`);
      assert.equal(res.status, 200);
      trusted = ((await res.json()) as { keys: { publicKey: string }[] }).keys.map((k) => k.publicKey);
      assert.equal(trusted.length, 1);
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    function tag(name: string, generateAppProofs?: boolean) {
      return {
        type: "ACTIVITY_TYPE_CREATE_USER_TAG" as const,
        timestampMs: now(),
        organizationId: init.organizationId,
        parameters: { userTagName: name, userIds: [] },
        ...(generateAppProofs === undefined ? {} : { generateAppProofs }),
      };
    }

    it("a submission with generateAppProofs carries a proof both verifiers accept", async () => {
      const { activity } = await root.http.createUserTag(tag("proved", true));
      assert.equal(activity.status, "ACTIVITY_STATUS_COMPLETED");
      const proofs = (activity as { appProofs?: AppProof[] }).appProofs;
      assert.ok(proofs && proofs.length === 1, JSON.stringify(activity).slice(0, 300));
      const proof = proofs[0]!;
      assert.doesNotThrow(() => verifyAppProofSignature(proof as never));
      const ours = verifyAppProof(proof, { trustedPublicKeys: trusted });
      assert.ok(ours.ok, JSON.stringify(ours));
      const payload = ours.payload as { type: string; timestampMs: string; policyOutcomeProof: Record<string, unknown> };
      assert.equal(payload.type, "APP_PROOF_TYPE_POLICY_OUTCOME");
      assert.match(payload.timestampMs, /^\d+$/);
      assert.equal(payload.policyOutcomeProof.organizationId, init.organizationId);
      assert.equal(payload.policyOutcomeProof.outcome, "OUTCOME_ALLOW");
      for (const k of ["decisionContextDigest", "organizationDataDigest"])
        assert.match(String(payload.policyOutcomeProof[k]), /^[0-9a-f]{64}$/);
      assert.deepEqual(payload.policyOutcomeProof.userRequestApprovals, [
        { userId: init.userId, publicKey: init.apiPublicKey, scheme: "SIGNATURE_SCHEME_TK_API_P256" },
      ]);

      // get_activity returns the same proofs.
      const again = await root.http.getActivity({ organizationId: init.organizationId, activityId: activity.id });
      assert.deepEqual((again.activity as { appProofs?: unknown }).appProofs, proofs);

      // Any change to the payload, or a key nobody trusts, fails.
      const tampered = { ...proof, proofPayload: proof.proofPayload.replace("OUTCOME_ALLOW", "OUTCOME_DENY_EXPLICIT") };
      assert.equal(verifyAppProof(tampered, { trustedPublicKeys: trusted }).ok, false);
      assert.throws(() => verifyAppProofSignature(tampered as never));
      const other = generateP256KeyPair(); // any other 130-byte key: untrusted
      const untrusted = verifyAppProof(proof, { trustedPublicKeys: [`04${"0".repeat(128)}${other.publicKey}`] });
      assert.deepEqual(untrusted.ok ? "ok" : untrusted.reason, "untrusted_key");
    });

    it("without generateAppProofs (or with false) the activity carries none", async () => {
      for (const flag of [undefined, false]) {
        const { activity } = await root.http.createUserTag(tag(`plain-${String(flag)}`, flag));
        assert.equal((activity as { appProofs?: unknown }).appProofs, undefined);
      }
    });

    it("an activity that waits for consensus gets a second proof when it completes", async () => {
      // A second root and threshold 2: every activity now needs both.
      const key2 = generateP256KeyPair();
      const created = await root.http.createUsers({
        type: "ACTIVITY_TYPE_CREATE_USERS_V3",
        timestampMs: now(),
        organizationId: init.organizationId,
        parameters: {
          users: [
            {
              userName: "root-2",
              userTags: [],
              apiKeys: [{ apiKeyName: "k", publicKey: key2.publicKey, curveType: "API_KEY_CURVE_P256" }],
              authenticators: [],
              oauthProviders: [],
            },
          ],
        },
      } as never);
      const r2Id = (created.activity.result as { createUsersResult: { userIds: string[] } }).createUsersResult.userIds[0]!;
      await root.http.updateRootQuorum({
        type: "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM",
        timestampMs: now(),
        organizationId: init.organizationId,
        parameters: { threshold: 2, userIds: [init.userId, r2Id] },
      });
      const r2 = partyFor(server.url, key2, r2Id, init.organizationId);
      const pending = (await root.http.createUserTag(tag("needs-two", true))).activity;
      assert.equal(pending.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");
      const first = (pending as { appProofs?: AppProof[] }).appProofs!;
      assert.equal(first.length, 1);
      assert.equal(
        (verifyAppProof(first[0]!, { trustedPublicKeys: trusted }) as { payload: { policyOutcomeProof: { outcome: string } } }).payload
          .policyOutcomeProof.outcome,
        "OUTCOME_REQUIRES_CONSENSUS",
      );
      const done = (
        await r2.http.approveActivity({
          type: "ACTIVITY_TYPE_APPROVE_ACTIVITY",
          timestampMs: now(),
          organizationId: init.organizationId,
          parameters: { fingerprint: pending.fingerprint },
        })
      ).activity;
      assert.equal(done.status, "ACTIVITY_STATUS_COMPLETED");
      const proofs = (done as { appProofs?: AppProof[] }).appProofs!;
      assert.equal(proofs.length, 2);
      const second = verifyAppProof(proofs[1]!, { trustedPublicKeys: trusted });
      assert.ok(second.ok);
      assert.doesNotThrow(() => verifyAppProofSignature(proofs[1] as never));
      const outcome = (second.payload as { policyOutcomeProof: { outcome: string; userRequestApprovals: { userId: string }[] } })
        .policyOutcomeProof;
      assert.equal(outcome.outcome, "OUTCOME_ALLOW");
      assert.deepEqual(
        outcome.userRequestApprovals.map((a) => a.userId),
        [init.userId, r2Id],
      );
      // Back to a 1-of-1 root quorum (both roots approve the change).
      const back = (
        await root.http.updateRootQuorum({
          type: "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM",
          timestampMs: now(),
          organizationId: init.organizationId,
          parameters: { threshold: 1, userIds: [init.userId] },
        })
      ).activity;
      await r2.http.approveActivity({
        type: "ACTIVITY_TYPE_APPROVE_ACTIVITY",
        timestampMs: now(),
        organizationId: init.organizationId,
        parameters: { fingerprint: back.fingerprint },
      });
    });
  });
}
