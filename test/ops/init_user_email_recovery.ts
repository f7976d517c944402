// init_user_email_recovery V2 (docs/logins.md §9.4): the recovery credential arrives by mail,
// opens with @turnkey/crypto, and stamps the user's recover_user, which adds a passkey that
// then signs. Unverified emails get nothing; older versions are refused naming V2.
import { after, it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, notFound, perEngine, userParams } from "../helpers/inproc.ts";
import { sinkPerHarness } from "../helpers/smtp-sink.ts";
import { bundleFrom, openBundle, subOrgWithEmail, targetKey } from "../helpers/credential-bundles.ts";
import { SoftPasskey, TEST_WEBAUTHN, queryWithPasskey } from "../helpers/webauthn.ts";
import { initUserEmailRecoveryV2 } from "../../src/activities/authenticators/init_user_email_recovery.ts";
import { recoverUser } from "../../src/activities/authenticators/recover_user.ts";

const OP = "init_user_email_recovery";
const TYPE = "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2";
let n = 0;
const fresh = () => `recover${++n}-${Date.now()}@example.com`;

const s = sinkPerHarness({ webauthn: TEST_WEBAUTHN });
perEngine(
  "init_user_email_recovery",
  (h) => {
    after(s.stop);

    it("init (parent's backend) → mail → decrypt → recover_user stamped by the credential adds a passkey that signs", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), email);
      const target = targetKey();
      const mark = s.sink().mark();
      const r = completed(
        await h().submit(
          OP,
          TYPE,
          { email, targetPublicKey: target.publicKey, emailCustomization: { appName: "Demo" } },
          { organizationId: user.orgId },
        ),
        initUserEmailRecoveryV2,
      );
      assert.equal(r.userId, user.userId);
      const mail = await s.sink().nextMail(email, mark);
      assert.match(mail.subject, /recovery credential/);
      const credential = openBundle(bundleFrom(mail), target);
      const as = { organizationId: user.orgId, userId: user.userId, key: credential };
      const pk = new SoftPasskey();
      const ids = completed(
        await h().submit(
          "recover_user",
          "ACTIVITY_TYPE_RECOVER_USER",
          { userId: user.userId, authenticator: pk.registration({ name: "recovered" }) },
          { as },
        ),
        recoverUser,
      ).authenticatorId;
      assert.equal(ids.length, 1);
      const who = await queryWithPasskey(h(), pk, "whoami", { organizationId: user.orgId });
      assert.equal(who.json.userId, user.userId);
    });

    it("the credential is an expiring session key of the user (15 minutes by default); a bad expiration sends nothing", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), email);
      const target = targetKey();
      const mark = s.sink().mark();
      invalidRequest(
        await h().submit(
          OP,
          TYPE,
          { email, targetPublicKey: target.publicKey, emailCustomization: { appName: "Demo" }, expirationSeconds: "0" },
          { organizationId: user.orgId },
        ),
        /invalid api key expiration/,
      );
      assert.equal(s.sink().mails.length, mark);
      completed(
        await h().submit(
          OP,
          TYPE,
          { email, targetPublicKey: target.publicKey, emailCustomization: { appName: "Demo" } },
          { organizationId: user.orgId },
        ),
        initUserEmailRecoveryV2,
      );
      const credential = openBundle(bundleFrom(await s.sink().nextMail(email, mark)), target);
      const key = await h()
        .service.store.db.selectFrom("api_keys")
        .selectAll()
        .where("public_key", "=", credential.publicKey)
        .executeTakeFirstOrThrow();
      assert.equal(key.user_id, user.userId);
      assert.equal(key.credential_type, "CREDENTIAL_TYPE_LOGIN");
      assert.match(key.name, /^Recovery - /);
      assert.ok(Math.abs(Number(key.expires_at) - (Date.now() + 900_000)) < 15_000);
    });

    it("an unverified email gets no mail (404); the older version is refused naming V2", async () => {
      const email = fresh();
      completed(
        await h().submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [userParams({ userEmail: email })] }),
        "createUsersResult",
      );
      const mark = s.sink().mark();
      notFound(
        await h().submit(OP, TYPE, { email, targetPublicKey: targetKey().publicKey, emailCustomization: { appName: "Demo" } }),
        /no user with the verified email/,
      );
      invalidRequest(
        await h().submit(OP, "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY", { email, targetPublicKey: targetKey().publicKey }),
        /ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2/,
      );
      assert.equal(s.sink().mails.length, mark);
    });
  },
  undefined,
  s.options,
);
