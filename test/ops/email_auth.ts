// email_auth V3 (docs/logins.md §9.3): a parent's backend asks for a login credential for the
// user of its sub-organization with a verified email; the bundle arrives by mail, opens with
// @turnkey/crypto and stamps as the user. Unverified contacts, foreign customization and
// older versions are refused; the bundle is in no record.
import { after, it } from "node:test";
import assert from "node:assert/strict";
import { completed, failsWith, invalidRequest, notFound, onSqlite, perEngine, userParams } from "../helpers/inproc.ts";
import { sinkPerHarness } from "../helpers/smtp-sink.ts";
import { bundleFrom, openBundle, subOrgWithEmail, targetKey } from "../helpers/credential-bundles.ts";
import { emailAuthV3 } from "../../src/activities/otp/email_auth.ts";

const OP = "email_auth";
const TYPE = "ACTIVITY_TYPE_EMAIL_AUTH_V3";
let n = 0;
const fresh = () => `emailauth${++n}-${Date.now()}@example.com`;

const s = sinkPerHarness();
perEngine(
  "email_auth",
  (h) => {
    after(s.stop);

    it("the parent's backend mails a credential to the sub-organization's verified email; it opens with @turnkey/crypto and stamps whoami", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), email);
      const target = targetKey();
      const mark = s.sink().mark();
      const res = await h().submit(
        OP,
        TYPE,
        {
          email: email.toUpperCase(),
          targetPublicKey: target.publicKey,
          emailCustomization: { appName: "Demo" },
          expirationSeconds: "600",
        },
        { organizationId: user.orgId },
      );
      const r = completed(res, emailAuthV3);
      assert.equal(r.userId, user.userId);
      const mail = await s.sink().nextMail(email, mark);
      assert.match(mail.subject, /Demo login credential/);
      const bundle = bundleFrom(mail);
      const credential = openBundle(bundle, target);
      const who = await h().query("whoami", {}, { as: { organizationId: user.orgId, userId: user.userId, key: credential } });
      assert.equal(who.status, 200, JSON.stringify(who.json));
      assert.equal(who.json.userId, user.userId);
      const key = await h().service.store.db.selectFrom("api_keys").selectAll().where("id", "=", r.apiKeyId).executeTakeFirstOrThrow();
      assert.equal(key.public_key, credential.publicKey);
      assert.equal(key.credential_type, "CREDENTIAL_TYPE_LOGIN");
      assert.match(key.name, /^Email Auth - \d{4}-/);
      assert.ok(Math.abs(Number(key.expires_at) - (Date.now() + 600_000)) < 15_000);
      // The bundle is in the mail only: not in the activity, nor anywhere in its row.
      const row = await h()
        .service.store.db.selectFrom("activities")
        .selectAll()
        .where("id", "=", res.json.activity.id)
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(bundle));
      assert.ok(!JSON.stringify(res.json).includes(bundle));
    });

    it("an unverified email gets nothing (404, no mail); a user of another organization is not found either", async () => {
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
      const other = await subOrgWithEmail(h(), fresh());
      notFound(
        await h().submit(
          OP,
          TYPE,
          { email, targetPublicKey: targetKey().publicKey, emailCustomization: { appName: "Demo" } },
          { organizationId: other.orgId },
        ),
        /no user with the verified email/,
      );
      assert.equal(s.sink().mails.length, mark);
    });

    it("refuses a bad target key, a missing appName, an end user's customization, and the older versions naming V3", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), email);
      const as = user;
      invalidRequest(
        await h().submit(
          OP,
          TYPE,
          { email, targetPublicKey: "02" + "ff".repeat(32), emailCustomization: { appName: "Demo" } },
          { organizationId: user.orgId },
        ),
        /targetPublicKey/,
      );
      invalidRequest(
        await h().submit(
          OP,
          TYPE,
          { email, targetPublicKey: targetKey().publicKey, emailCustomization: {} },
          { organizationId: user.orgId },
        ),
        /appName/,
      );
      invalidRequest(
        await h().submit(
          OP,
          TYPE,
          {
            email,
            targetPublicKey: targetKey().publicKey,
            emailCustomization: { appName: "Phish", magicLinkTemplate: "https://evil.example/%s" },
          },
          { as },
        ),
        /may not customize/,
        ["parameters.emailCustomization.magicLinkTemplate"],
      );
      for (const old of ["ACTIVITY_TYPE_EMAIL_AUTH", "ACTIVITY_TYPE_EMAIL_AUTH_V2"]) {
        invalidRequest(
          await h().submit(OP, old, { email, targetPublicKey: targetKey().publicKey }, { organizationId: user.orgId }),
          /ACTIVITY_TYPE_EMAIL_AUTH_V3/,
        );
      }
      // The user's own request without customization is served: the message names the app, not the request's appName.
      const mark = s.sink().mark();
      completed(
        await h().submit(OP, TYPE, { email, targetPublicKey: targetKey().publicKey, emailCustomization: { appName: "Phish" } }, { as }),
        emailAuthV3,
      );
      const mail = await s.sink().nextMail(email, mark);
      assert.doesNotMatch(mail.subject, /Phish/);
    });

    it("the mail counts against the recipient's limit (429 once used up, nothing issued)", async () => {
      const email = fresh();
      const user = await subOrgWithEmail(h(), email);
      let refused;
      for (let i = 0; i < 12 && !refused; i++) {
        const res = await h().submit(
          OP,
          TYPE,
          { email, targetPublicKey: targetKey().publicKey, emailCustomization: { appName: "Demo" } },
          { organizationId: user.orgId },
        );
        if (res.status !== 200) refused = res;
      }
      assert.ok(refused, "a limit refused the mails eventually");
      failsWith(refused, 429, 8, "RATE_LIMIT_EXCEEDED");
      const keys = await h()
        .service.store.db.selectFrom("api_keys")
        .select("id")
        .where("user_id", "=", user.userId)
        .where("credential_type", "=", "CREDENTIAL_TYPE_LOGIN")
        .execute();
      assert.ok(keys.length <= 10);
    });
  },
  undefined,
  s.options,
);

onSqlite("email_auth without a mail transport", (h) => {
  it("is refused (FAILED_PRECONDITION EMAIL_SENDING_DISABLED) and issues no key", async () => {
    const email = fresh();
    const user = await subOrgWithEmail(h(), email);
    const res = await h().submit(
      OP,
      TYPE,
      { email, targetPublicKey: targetKey().publicKey, emailCustomization: { appName: "Demo" } },
      { organizationId: user.orgId },
    );
    failsWith(res, 400, 9, "EMAIL_SENDING_DISABLED", /no mail transport/);
    const keys = await h()
      .service.store.db.selectFrom("api_keys")
      .select("id")
      .where("user_id", "=", user.userId)
      .where("credential_type", "=", "CREDENTIAL_TYPE_LOGIN")
      .execute();
    assert.equal(keys.length, 0);
  });
});
