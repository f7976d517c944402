// recover_user is stamped by the user's own session key. Here the session comes from
// stamp_login stamped by the user's API key (an OTP login yields the same kind of key: an
// expiring CREDENTIAL_TYPE_LOGIN api key of the user).
import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  exhausted,
  forbidden,
  invalidRequest,
  notFound,
  perEngine,
  type Creds,
  type Harness,
} from "../helpers/inproc.ts";
import { SoftPasskey, TEST_WEBAUTHN, queryWithPasskey } from "../helpers/webauthn.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { recoverUser } from "../../src/activities/authenticators/recover_user.ts";
import { stampLogin } from "../../src/activities/sessions/stamp_login.ts";

const OP = "recover_user";
const TYPE = "ACTIVITY_TYPE_RECOVER_USER";
const MISSING = "00000000-0000-4000-8000-000000000000";

/** A session of `user`: a fresh key registered by stamp_login, usable as an X-Stamp credential. */
async function sessionOf(h: Harness, user: Creds): Promise<Creds> {
  const key = generateP256KeyPair();
  const res = await h.submit(
    "stamp_login",
    "ACTIVITY_TYPE_STAMP_LOGIN",
    { publicKey: key.publicKey, expirationSeconds: "600" },
    { as: user },
  );
  completed(res, stampLogin);
  return { ...user, key };
}

perEngine(
  "recover_user",
  (h) => {
    it("the user's session key adds a passkey to the user; the passkey then signs", async () => {
      const [u] = await addUsersWithKeys(h(), 1);
      const session = await sessionOf(h(), u!);
      const pk = new SoftPasskey();
      const res = await h().submit(OP, TYPE, { userId: u!.userId, authenticator: pk.registration({ name: "recovered" }) }, { as: session });
      const ids = completed(res, recoverUser).authenticatorId;
      assert.equal(ids.length, 1);
      assert.ok(res.json.activity.intent.recoverUserIntent);
      const listed = (await h().query("get_authenticators", { userId: u!.userId })).json.authenticators;
      assert.deepEqual(
        listed.map((a: { authenticatorId: string }) => a.authenticatorId),
        ids,
      );
      assert.equal(listed[0].authenticatorName, "recovered");
      const who = await queryWithPasskey(h(), pk, "whoami", { organizationId: u!.organizationId });
      assert.equal(who.json.userId, u!.userId);
    });

    it("a session may not add a passkey to another user (403)", async () => {
      const [u, v] = await addUsersWithKeys(h(), 2);
      const session = await sessionOf(h(), u!);
      forbidden(await h().submit(OP, TYPE, { userId: v!.userId, authenticator: new SoftPasskey().registration() }, { as: session }));
      assert.deepEqual((await h().query("get_authenticators", { userId: v!.userId })).json.authenticators, []);
    });

    it("holds the 10-passkey cap (429)", async () => {
      const [u] = await addUsersWithKeys(h(), 1);
      completed(
        await h().submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
          userId: u!.userId,
          authenticators: Array.from({ length: 10 }, () => new SoftPasskey().registration()),
        }),
        "createAuthenticatorsResult",
      );
      exhausted(
        await h().submit(OP, TYPE, { userId: u!.userId, authenticator: new SoftPasskey().registration() }, { as: u }),
        /maximum authenticators/,
      );
    });

    it("refuses an attestation that does not verify, naming the field (400), and an unknown user (404)", async () => {
      const pk = new SoftPasskey();
      invalidRequest(
        await h().submit(OP, TYPE, { userId: h().root.userId, authenticator: { ...pk.registration(), challenge: "AAAA" } }),
        /challenge/,
        ["parameters.authenticator.challenge"],
      );
      invalidRequest(
        await h().submit(OP, TYPE, { userId: h().root.userId, authenticator: pk.registration({ origin: "https://evil.example" }) }),
        /origin/,
        ["parameters.authenticator.attestation.clientDataJson"],
      );
      invalidRequest(await h().submit(OP, TYPE, { userId: h().root.userId }), /must be set/, ["parameters.authenticator"]);
      notFound(await h().submit(OP, TYPE, { userId: MISSING, authenticator: pk.registration() }));
    });

    it("the same body twice is one activity", async () => {
      await assertIdempotent(h(), OP, TYPE, { userId: h().root.userId, authenticator: new SoftPasskey().registration() });
    });
  },
  undefined,
  { logins: { ...DEFAULT_LOGIN_SETTINGS, webauthn: TEST_WEBAUTHN } },
);
