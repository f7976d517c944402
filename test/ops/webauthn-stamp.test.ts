// X-Stamp-WebAuthn through the real app (in-process harness, both engines), with passkeys of
// the software authenticator (test/helpers/webauthn.ts): a sub-organization whose root user
// has only a passkey; what the passkey may do there (queries, activities, votes, a policy
// asking for a passkey); and every way a passkey stamp is refused.
import { it } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { addUsersWithKeys, completed, failsWith, perEngine, publicKey, type Harness, type Json, type Res } from "../helpers/inproc.ts";
import { SoftPasskey, TEST_WEBAUTHN, queryWithPasskey, submitWithPasskey } from "../helpers/webauthn.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";

const logins = { ...DEFAULT_LOGIN_SETTINGS, webauthn: TEST_WEBAUTHN };
const unauthenticated = (res: Res, code: string, message?: RegExp) => failsWith(res, 401, 16, code, message);

/** A sub-organization of root's whose only root user holds only `passkey`. */
async function passkeySubOrg(h: Harness, passkey: SoftPasskey): Promise<{ subOrganizationId: string; userId: string }> {
  const res = await h.submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
    subOrganizationName: `pk-${passkey.id.slice(0, 8)}`,
    rootQuorumThreshold: 1,
    rootUsers: [{ userName: "passkey user", apiKeys: [], authenticators: [passkey.registration()], oauthProviders: [] }],
  });
  const r = completed(res, "createSubOrganizationResultV8");
  return { subOrganizationId: r.subOrganizationId, userId: r.rootUserIds[0] };
}

perEngine(
  "X-Stamp-WebAuthn",
  (h) => {
    it("a passkey root user of a sub-organization: whoami, create_api_keys, get_user — votes record the passkey", async () => {
      const pk = new SoftPasskey();
      const sub = await passkeySubOrg(h(), pk);
      const who = await queryWithPasskey(h(), pk, "whoami", { organizationId: sub.subOrganizationId });
      assert.equal(who.status, 200, JSON.stringify(who.json));
      assert.equal(who.json.userId, sub.userId);
      assert.equal(who.json.organizationId, sub.subOrganizationId);
      const key = publicKey();
      const res = await submitWithPasskey(
        h(),
        pk,
        "create_api_keys",
        "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
        { userId: sub.userId, apiKeys: [{ apiKeyName: "k", publicKey: key, curveType: "API_KEY_CURVE_P256" }] },
        sub.subOrganizationId,
      );
      completed(res, "createApiKeysResult");
      const vote = res.json.activity.votes[0] as Json;
      assert.equal(vote.scheme, "SIGNATURE_SCHEME_WEBAUTHN");
      assert.equal(vote.publicKey, pk.coseKey().toString("base64url"));
      assert.equal(vote.user.authenticators[0].credentialId, pk.id);
      const user = await queryWithPasskey(h(), pk, "get_user", { organizationId: sub.subOrganizationId, userId: sub.userId });
      assert.equal(user.json.user.apiKeys[0].credential.publicKey, key);
    });

    it("RS256 passkeys, authenticators without a counter, and standard base64 stamps verify", async () => {
      const rs = new SoftPasskey({ alg: "RS256" });
      const sub = await passkeySubOrg(h(), rs);
      assert.equal((await queryWithPasskey(h(), rs, "whoami", { organizationId: sub.subOrganizationId })).status, 200);
      const zero = new SoftPasskey({ counter: 0 });
      const sub0 = await passkeySubOrg(h(), zero);
      for (let i = 0; i < 2; i++)
        assert.equal((await queryWithPasskey(h(), zero, "whoami", { organizationId: sub0.subOrganizationId })).status, 200);
      const b64 = await queryWithPasskey(h(), rs, "whoami", { organizationId: sub.subOrganizationId }, { base64: true });
      assert.equal(b64.status, 200, JSON.stringify(b64.json));
    });

    it("a parent's organization id finds the sub-organization's passkey for stamp_login (then-descendants)", async () => {
      const pk = new SoftPasskey();
      const sub = await passkeySubOrg(h(), pk);
      const res = await submitWithPasskey(
        h(),
        pk,
        "stamp_login",
        "ACTIVITY_TYPE_STAMP_LOGIN",
        { publicKey: publicKey() },
        h().root.organizationId,
      );
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.equal(res.json.activity.organizationId, sub.subOrganizationId);
      assert.ok(res.json.activity.result.stampLoginResult.session);
      // Ordinary queries look upward only: the parent's id does not find it for get_user.
      unauthenticated(
        await queryWithPasskey(h(), pk, "list_users", { organizationId: h().root.organizationId }),
        "CREDENTIAL_NOT_FOUND",
        /credential ID could not be found in organization or its parent organization/,
      );
    });

    it("refuses a tampered body, a replay, a counter that goes back, a forged signature", async () => {
      const pk = new SoftPasskey();
      const sub = await passkeySubOrg(h(), pk);
      const body = JSON.stringify({ organizationId: sub.subOrganizationId });
      const stamp = pk.stamp(body);
      const tampered = JSON.stringify({ organizationId: sub.subOrganizationId, x: 1 });
      unauthenticated(await h().post("/public/v1/query/whoami", tampered, { "X-Stamp-Webauthn": stamp }), "SIGNATURE_INVALID", /challenge/);
      assert.equal((await h().post("/public/v1/query/whoami", body, { "X-Stamp-Webauthn": stamp })).status, 200);
      unauthenticated(await h().post("/public/v1/query/whoami", body, { "X-Stamp-Webauthn": stamp }), "SIGNATURE_INVALID", /counter/);
      unauthenticated(await queryWithPasskey(h(), pk, "whoami", JSON.parse(body), { counter: 1 }), "SIGNATURE_INVALID", /counter/);
      const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
      unauthenticated(
        await queryWithPasskey(h(), pk, "whoami", JSON.parse(body), { signWith: other }),
        "SIGNATURE_INVALID",
        /does not verify/,
      );
      // The refused stamps moved nothing: the next honest one still works.
      assert.equal((await queryWithPasskey(h(), pk, "whoami", JSON.parse(body))).status, 200);
    });

    it("refuses wrong type, origin, RP ID, a missing user-present flag, and unknown or malformed stamps", async () => {
      const pk = new SoftPasskey();
      const sub = await passkeySubOrg(h(), pk);
      const body = { organizationId: sub.subOrganizationId };
      unauthenticated(await queryWithPasskey(h(), pk, "whoami", body, { type: "webauthn.create" }), "SIGNATURE_INVALID", /webauthn.get/);
      unauthenticated(await queryWithPasskey(h(), pk, "whoami", body, { origin: "https://evil.example" }), "SIGNATURE_INVALID", /origin/);
      unauthenticated(await queryWithPasskey(h(), pk, "whoami", body, { rpId: "evil.example" }), "SIGNATURE_INVALID", /RP ID/);
      unauthenticated(await queryWithPasskey(h(), pk, "whoami", body, { flags: 0x04 }), "SIGNATURE_INVALID", /user-present/);
      unauthenticated(
        await queryWithPasskey(h(), new SoftPasskey(), "whoami", body),
        "CREDENTIAL_NOT_FOUND",
        /credential ID could not be found/,
      );
      const raw = JSON.stringify(body);
      for (const bad of [
        "not json",
        "[]",
        JSON.stringify({ authenticatorData: "AA" }),
        JSON.stringify({ ...JSON.parse(pk.stamp(raw)), signature: "!!" }),
      ]) {
        unauthenticated(
          await h().post("/public/v1/query/whoami", raw, { "X-Stamp-Webauthn": bad }),
          "UNAUTHENTICATED",
          /could not extract webauthn stamp/,
        );
      }
    });

    it("a passkey approval satisfies a policy asking for a passkey; an API key approval does not", async () => {
      const [submitter, byKey, byPasskey] = await addUsersWithKeys(h(), 3);
      const pk = new SoftPasskey();
      const registration = pk.registration();
      completed(
        await h().submit(
          "create_authenticators",
          "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
          { userId: byPasskey!.userId, authenticators: [registration] },
          { as: byPasskey },
        ),
        "createAuthenticatorsResult",
      );
      const tagName = `pk-policy-${pk.id.slice(0, 6)}`;
      completed(
        await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
          policyName: "passkey approval for tags",
          effect: "EFFECT_ALLOW",
          condition: "activity.type == 'ACTIVITY_TYPE_CREATE_USER_TAG'",
          // credential_id: the passkey's WebAuthn credential id (API keys read '').
          consensus: `approvers.count() >= 2 && credentials.any(c, c.type == 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR' && c.credential_id == '${registration.attestation.credentialId}')`,
          notes: "",
        }),
        "createPolicyResult",
      );
      try {
        const pending = await h().submit(
          "create_user_tag",
          "ACTIVITY_TYPE_CREATE_USER_TAG",
          { userTagName: tagName, userIds: [] },
          { as: submitter },
        );
        assert.equal(pending.json.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED", JSON.stringify(pending.json));
        const fingerprint = pending.json.activity.fingerprint as string;
        const keyVote = await h().submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint }, { as: byKey });
        assert.equal(keyVote.json.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED", JSON.stringify(keyVote.json));
        const passkeyVote = await submitWithPasskey(
          h(),
          pk,
          "approve_activity",
          "ACTIVITY_TYPE_APPROVE_ACTIVITY",
          { fingerprint },
          h().root.organizationId,
        );
        completed(passkeyVote, "createUserTagResult");
        assert.ok(
          (passkeyVote.json.activity.votes as Json[]).some(
            (v) => v.scheme === "SIGNATURE_SCHEME_WEBAUTHN" && v.userId === byPasskey!.userId,
          ),
        );
      } finally {
        const policies = (await h().query("list_policies")).json.policies as Json[];
        const mine = policies.filter((p) => p.policyName === "passkey approval for tags").map((p) => p.policyId);
        if (mine.length)
          completed(await h().submit("delete_policies", "ACTIVITY_TYPE_DELETE_POLICIES", { policyIds: mine }), "deletePoliciesResult");
      }
    });

    it("delete_users removes a user's passkeys with it: the passkey no longer signs", async () => {
      const pk = new SoftPasskey();
      const res = await h().submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", {
        users: [{ userName: "leaving", apiKeys: [], authenticators: [pk.registration()], oauthProviders: [], userTags: [] }],
      });
      const [userId] = completed(res, "createUsersResult").userIds as string[];
      assert.equal((await queryWithPasskey(h(), pk, "whoami", { organizationId: h().root.organizationId })).json.userId, userId);
      completed(await h().submit("delete_users", "ACTIVITY_TYPE_DELETE_USERS", { userIds: [userId] }), "deleteUsersResult");
      unauthenticated(await queryWithPasskey(h(), pk, "whoami", { organizationId: h().root.organizationId }), "CREDENTIAL_NOT_FOUND");
      // Its credential id is free again in the organization.
      completed(
        await h().submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
          userId: h().root.userId,
          authenticators: [pk.registration()],
        }),
        "createAuthenticatorsResult",
      );
    });

    it("answers hostile headers with 401, never a 5xx", async () => {
      const pk = new SoftPasskey();
      const sub = await passkeySubOrg(h(), pk);
      const raw = JSON.stringify({ organizationId: sub.subOrganizationId });
      const honest = JSON.parse(pk.stamp(raw)) as Record<string, string>;
      const hostile = [
        "",
        "null",
        '"a string"',
        JSON.stringify({ ...honest, credentialId: 7 }),
        JSON.stringify({ ...honest, clientDataJson: Buffer.from("not json").toString("base64url") }),
        JSON.stringify({ ...honest, clientDataJson: Buffer.from("[]").toString("base64url") }),
        JSON.stringify({ ...honest, authenticatorData: "A".repeat(70000) }),
        JSON.stringify({ ...honest, signature: Buffer.from("not DER").toString("base64url") }),
        JSON.stringify({ __proto__: { x: 1 }, constructor: 1 }),
      ];
      for (const value of hostile) {
        const res = await h().post("/public/v1/query/whoami", raw, { "X-Stamp-Webauthn": value });
        assert.equal(res.status, 401, `${value.slice(0, 80)}: ${JSON.stringify(res.json)}`);
        assert.equal(res.json.code, 16);
      }
    });
  },
  undefined,
  { logins },
);
