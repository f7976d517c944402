import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, notFound, invalidRequest, perEngine, type Json } from "../helpers/inproc.ts";
import { SoftPasskey, TEST_WEBAUTHN } from "../helpers/webauthn.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";
import { createAuthenticatorsV2 } from "../../src/activities/authenticators/create_authenticators.ts";

const OP = "get_authenticators";
const MISSING = "00000000-0000-4000-8000-000000000000";

perEngine(
  "get_authenticators",
  (h) => {
    it("lists one user's passkeys, oldest first; a user without any has []", async () => {
      const [u, v] = await addUsersWithKeys(h(), 2);
      const ids: string[] = [];
      for (const name of ["first", "second"]) {
        const r = await h().submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
          userId: u!.userId,
          authenticators: [new SoftPasskey().registration({ name })],
        });
        ids.push(...completed(r, createAuthenticatorsV2).authenticatorIds);
      }
      const res = await h().query(OP, { userId: u!.userId });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.deepEqual(
        (res.json.authenticators as Json[]).map((a) => a.authenticatorName),
        ["first", "second"],
      );
      assert.deepEqual(
        (res.json.authenticators as Json[]).map((a) => a.authenticatorId),
        ids,
      );
      assert.deepEqual((await h().query(OP, { userId: v!.userId })).json.authenticators, []);
    });

    it("a parent reads its sub-organization's passkeys", async () => {
      const pk = new SoftPasskey();
      const sub = completed(
        await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
          subOrganizationName: "get_authenticators sub",
          rootQuorumThreshold: 1,
          rootUsers: [{ userName: "pk", apiKeys: [], authenticators: [pk.registration()], oauthProviders: [] }],
        }),
        "createSubOrganizationResultV8",
      );
      const res = await h().query(OP, { userId: sub.rootUserIds[0] }, { organizationId: sub.subOrganizationId });
      assert.equal(res.json.authenticators[0].credentialId, pk.id);
    });

    it("refuses an unknown user (404) and a missing userId (400)", async () => {
      notFound(await h().query(OP, { userId: MISSING }));
      invalidRequest(await h().query(OP, {}), undefined, ["userId"]);
    });
  },
  undefined,
  { logins: { ...DEFAULT_LOGIN_SETTINGS, webauthn: TEST_WEBAUTHN } },
);
