import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, notFound, invalidRequest, perEngine, type Json } from "../helpers/inproc.ts";
import { SoftPasskey, TEST_WEBAUTHN } from "../helpers/webauthn.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";

const OP = "get_authenticator";
const MISSING = "00000000-0000-4000-8000-000000000000";

perEngine(
  "get_authenticator",
  (h) => {
    it("answers one passkey in the Authenticator shape; other organizations' are not found", async () => {
      const [u] = await addUsersWithKeys(h(), 1);
      const pk = new SoftPasskey();
      const { authenticatorIds } = completed(
        await h().submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
          userId: u!.userId,
          authenticators: [pk.registration({ name: "yubi" })],
        }),
        "createAuthenticatorsResult",
      );
      const res = await h().query(OP, { authenticatorId: authenticatorIds[0] });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      const a = res.json.authenticator as Json;
      assert.deepEqual(Object.keys(a).sort(), [
        "aaguid",
        "attestationType",
        "authenticatorId",
        "authenticatorName",
        "createdAt",
        "credential",
        "credentialId",
        "model",
        "transports",
        "updatedAt",
      ]);
      assert.equal(a.authenticatorName, "yubi");
      assert.equal(a.credentialId, pk.id);
      assert.deepEqual(a.credential, { publicKey: pk.coseKey().toString("base64url"), type: "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR" });
      // The same credential as get_user shows it.
      const user = (await h().query("get_user", { userId: u!.userId })).json.user as Json;
      assert.deepEqual(user.authenticators[0], a);
      const other = await h().newOrg("get_authenticator other");
      notFound(await h().query(OP, { authenticatorId: authenticatorIds[0] }, { as: other }));
    });

    it("refuses an unknown id (404) and a malformed one (400)", async () => {
      notFound(await h().query(OP, { authenticatorId: MISSING }));
      invalidRequest(await h().query(OP, { authenticatorId: "nope" }), undefined, ["authenticatorId"]);
    });
  },
  undefined,
  { logins: { ...DEFAULT_LOGIN_SETTINGS, webauthn: TEST_WEBAUTHN } },
);
