import { after, it } from "node:test";
import assert from "node:assert/strict";
import { completed, conflict, exhausted, failsWith, invalidRequest, perEngine, UUID } from "../helpers/inproc.ts";
import { refusedPort, sinkPerHarness, TEST_FROM } from "../helpers/smtp-sink.ts";
import { activityCount, freshEmail, invitationParams, invitationRow, invite, subOrg } from "../helpers/invitations.ts";
import { DEFAULT_LOGIN_SETTINGS, DEFAULT_OTP_LIMITS } from "../../src/logins/settings.ts";
import { smtpTransport } from "../../src/logins/otp/transports/index.ts";
import { createInvitations, INVITATION_TTL_HOURS, MAX_LIVE_INVITATIONS } from "../../src/activities/invitations/create_invitations.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";
import { invitationView } from "../../src/store/invitations.ts";

const OP = "create_invitations";
const TYPE = "ACTIVITY_TYPE_CREATE_INVITATIONS";

const s = sinkPerHarness();
perEngine(
  "create_invitations",
  (h) => {
    after(s.stop);

    it("mails each receiver a one-time token; only its digest is stored; the view is the SDK's v1Invitation", async () => {
      const tag = completed(
        await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "invited", userIds: [] }),
        createUserTag,
      ).userTagId;
      const before = Date.now();
      const sent = await invite(h(), s.sink(), { receiverUserName: "Ada", receiverUserTags: [tag, tag], accessType: "ACCESS_TYPE_WEB" });
      assert.match(sent.invitationId, UUID);
      assert.ok(sent.mail.text.includes(sent.invitationId), "the mail names the invitation");
      assert.match(sent.mail.text, new RegExp(`expires in ${INVITATION_TTL_HOURS} hours`));
      assert.match(sent.mail.headers.get("from")!, /otp@sigil\.test/, "the operator's sender");
      const row = await invitationRow(h(), sent.invitationId);
      assert.notEqual(row.token_digest, null);
      assert.ok(!JSON.stringify(row).includes(sent.token), "the token itself is never stored");
      assert.ok(row.expires_at >= before + INVITATION_TTL_HOURS * 3600_000);
      const view = invitationView(row);
      assert.deepEqual(
        { ...view, createdAt: undefined, updatedAt: undefined },
        {
          invitationId: sent.invitationId,
          receiverUserName: "Ada",
          receiverEmail: sent.email,
          receiverUserTags: [tag],
          accessType: "ACCESS_TYPE_WEB",
          status: "INVITATION_STATUS_CREATED",
          createdAt: undefined,
          updatedAt: undefined,
          senderUserId: h().root.userId,
        },
      );
      assert.match(view.createdAt.seconds, /^\d+$/);
    });

    it("the official client sends it; several invitations in one request each get their own mail and token", async () => {
      const sdk = await h().sdk();
      const a = freshEmail();
      const b = freshEmail();
      const mark = s.sink().mark();
      const r = await sdk.createInvitations({
        invitations: [invitationParams(h().root, { receiverUserEmail: a }), invitationParams(h().root, { receiverUserEmail: b })] as never,
      });
      assert.equal(r.invitationIds.length, 2);
      const [ma, mb] = [await s.sink().nextMail(a, mark), await s.sink().nextMail(b, mark)];
      assert.notEqual(ma.text.split("\n")[0], mb.text.split("\n")[0]);
    });

    it("a tenant's invitation carries none of its words: not the receiver's name, not its organization's name; the app's name", async () => {
      const tenant = await subOrg(h(), "Totally Legit Bank");
      const sent = await invite(h(), s.sink(), { receiverUserName: "Click https://evil.example now" }, { as: tenant });
      const all = `${sent.mail.subject}\n${sent.mail.text}\n${sent.mail.html}`;
      assert.ok(!all.includes("evil.example") && !all.includes("Legit Bank"), all);
      const top = await h()
        .service.store.db.selectFrom("organizations")
        .select("name")
        .where("id", "=", h().root.organizationId)
        .executeTakeFirstOrThrow();
      assert.equal(sent.mail.subject, `Your invitation to ${top.name}`);
    });

    it("the same body twice is one activity and one mail", async () => {
      const params = { invitations: [invitationParams(h().root)] };
      const to = params.invitations[0]!.receiverUserEmail as string;
      const mark = s.sink().mark();
      const timestampMs = String(Date.now());
      const first = await h().submit(OP, TYPE, params, { timestampMs });
      const second = await h().submit(OP, TYPE, params, { timestampMs });
      assert.equal(second.json.activity.id, first.json.activity.id);
      await s.sink().nextMail(to, mark);
      assert.equal(
        s
          .sink()
          .mails.slice(mark)
          .filter((m) => m.to.includes(to)).length,
        1,
      );
    });

    it("one live invitation per mailbox per organization (409); another organization may invite the same address", async () => {
      const email = freshEmail();
      await invite(h(), s.sink(), { receiverUserEmail: email });
      const tagged = email.replace("@", "+again@");
      conflict(
        await h().submit(OP, TYPE, { invitations: [invitationParams(h().root, { receiverUserEmail: tagged })] }),
        /already has a live invitation/,
      );
      const other = await h().newOrg("Other");
      await invite(h(), s.sink(), { receiverUserEmail: email }, { as: other });
    });

    it("refuses, naming the field, with nothing sent or recorded: another sender, an unknown tag, a mailbox twice, an existing user's email", async () => {
      const [count, mails] = [await activityCount(h()), s.sink().mails.length];
      const other = await h().newOrg("Someone");
      invalidRequest(
        await h().submit(OP, TYPE, { invitations: [invitationParams(h().root, { senderUserId: other.userId })] }),
        /senderUserId/,
        ["parameters.invitations[0].senderUserId"],
      );
      invalidRequest(
        await h().submit(OP, TYPE, {
          invitations: [invitationParams(h().root, { receiverUserTags: ["00000000-0000-4000-8000-000000000000"] })],
        }),
        /no user tag/,
        ["parameters.invitations[0].receiverUserTags"],
      );
      const email = freshEmail();
      invalidRequest(
        await h().submit(OP, TYPE, {
          invitations: [
            invitationParams(h().root, { receiverUserEmail: email }),
            invitationParams(h().root, { receiverUserEmail: email.replace("@", "+2@") }),
          ],
        }),
        /twice/,
        ["parameters.invitations[1].receiverUserEmail"],
      );
      const existing = freshEmail();
      completed(
        await h().submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", {
          users: [{ userName: "x", userEmail: existing, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
        }),
        "createUsersResult",
      );
      const countAfterUser = await activityCount(h());
      conflict(
        await h().submit(OP, TYPE, { invitations: [invitationParams(h().root, { receiverUserEmail: existing.toUpperCase() })] }),
        /already exists/,
      );
      assert.equal(await activityCount(h()), countAfterUser);
      assert.equal(countAfterUser, count + 1, "only the create_users was recorded");
      assert.equal(s.sink().mails.length, mails, "no mail went out");
    });

    for (const [what, params, field] of [
      ["no invitations", { invitations: [] }, "parameters.invitations"],
      [
        "more than 10",
        {
          invitations: Array.from({ length: 11 }, () => ({
            receiverUserName: "x",
            receiverUserEmail: freshEmail(),
            receiverUserTags: [],
            accessType: "ACCESS_TYPE_ALL",
            senderUserId: "00000000-0000-4000-8000-000000000000",
          })),
        },
        "parameters.invitations",
      ],
      [
        "a bad address",
        {
          invitations: [
            {
              receiverUserName: "x",
              receiverUserEmail: "not-an-address",
              receiverUserTags: [],
              accessType: "ACCESS_TYPE_ALL",
              senderUserId: "00000000-0000-4000-8000-000000000000",
            },
          ],
        },
        "parameters.invitations[0].receiverUserEmail",
      ],
      [
        "an unknown access type",
        {
          invitations: [
            {
              receiverUserName: "x",
              receiverUserEmail: "a@example.com",
              receiverUserTags: [],
              accessType: "ACCESS_TYPE_ROOT",
              senderUserId: "00000000-0000-4000-8000-000000000000",
            },
          ],
        },
        "parameters.invitations[0].accessType",
      ],
      [
        "a blank name",
        {
          invitations: [
            {
              receiverUserName: " ",
              receiverUserEmail: "a@example.com",
              receiverUserTags: [],
              accessType: "ACCESS_TYPE_ALL",
              senderUserId: "00000000-0000-4000-8000-000000000000",
            },
          ],
        },
        "parameters.invitations[0].receiverUserName",
      ],
    ] as const) {
      it(`refuses ${what} (400)`, async () => {
        invalidRequest(await h().submit(OP, TYPE, params), undefined, [field]);
      });
    }

    it("at most 100 live invitations per organization: the 101st is 429; deleting one makes room", async () => {
      const org = await h().newOrg("Busy");
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await h().submit(OP, TYPE, { invitations: Array.from({ length: 10 }, () => invitationParams(org)) }, { as: org });
        ids.push(...completed(res, createInvitations).invitationIds);
      }
      assert.equal(ids.length, MAX_LIVE_INVITATIONS);
      const res = await h().submit(OP, TYPE, { invitations: [invitationParams(org)] }, { as: org });
      exhausted(res, /100 live invitations/);
      completed(
        await h().submit("delete_invitation", "ACTIVITY_TYPE_DELETE_INVITATION", { invitationId: ids[0] }, { as: org }),
        "deleteInvitationResult",
      );
      completed(await h().submit(OP, TYPE, { invitations: [invitationParams(org)] }, { as: org }), createInvitations);
    });

    it("messages per recipient mailbox are the OTP send limit: the 11th within an hour is 429 with Retry-After, nothing recorded", async () => {
      const email = freshEmail();
      for (let i = 0; i < 10; i++)
        await invite(h(), s.sink(), { receiverUserEmail: email.replace("@", `+${i}@`) }, { as: await h().newOrg(`Org ${i}`) });
      const last = await h().newOrg("Org 10");
      const count = await activityCount(h());
      const res = await h().submit(OP, TYPE, { invitations: [invitationParams(last, { receiverUserEmail: email })] }, { as: last });
      exhausted(res, /Too many messages to this recipient/);
      assert.equal(await activityCount(h()), count);
      const rows = await h()
        .service.store.db.selectFrom("invitations")
        .select("id")
        .where("organization_id", "=", last.organizationId)
        .execute();
      assert.equal(rows.length, 0);
    });
  },
  undefined,
  s.options,
);

const s2 = sinkPerHarness({ otpLimits: { ...DEFAULT_OTP_LIMITS, sendsPerOrganizationPerHour: 3 } });
perEngine(
  "create_invitations concurrency",
  (h) => {
    after(s2.stop);
    it("6 concurrent invitations of one mailbox: exactly one is created and mailed", async () => {
      const email = freshEmail();
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          h().submit(OP, TYPE, { invitations: [invitationParams(h().root, { receiverUserEmail: email.replace("@", `+${i}@`) })] }),
        ),
      );
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409, 409]);
      const ok = answers.find((a) => a.status === 200)!;
      completed(ok, createInvitations);
    });

    it("messages per organization tree: a tenant's invitations count against its top-level organization", async () => {
      const tenant = await subOrg(h(), "Tenant");
      await invite(h(), s2.sink(), {}, { as: tenant });
      await invite(h(), s2.sink());
      exhausted(
        await h().submit(OP, TYPE, { invitations: [invitationParams(tenant)] }, { as: tenant }),
        /Too many OTP messages for organization/,
      );
    });
  },
  undefined,
  s2.options,
);

perEngine(
  "create_invitations without mail, or when delivery fails",
  (h) => {
    it("without a mail transport: 400 EMAIL_SENDING_DISABLED, nothing recorded", async () => {
      const count = await activityCount(h());
      failsWith(await h().submit(OP, TYPE, { invitations: [invitationParams(h().root)] }), 400, 9, "EMAIL_SENDING_DISABLED", /SMTP_URL/);
      assert.equal(await activityCount(h()), count);
    });
  },
  ["sqlite"],
);

perEngine(
  "create_invitations delivery failure",
  (h) => {
    it("a mail server that refuses: 503, no invitation row, nothing recorded", async () => {
      const count = await activityCount(h());
      const res = await h().submit(OP, TYPE, { invitations: [invitationParams(h().root)] });
      failsWith(res, 503, 14, "UNSPECIFIED", /could not deliver the invitation email/);
      assert.equal(await activityCount(h()), count);
      assert.equal((await h().service.store.db.selectFrom("invitations").select("id").execute()).length, 0);
    });
  },
  ["sqlite"],
  async () => ({
    logins: {
      ...DEFAULT_LOGIN_SETTINGS,
      email: smtpTransport({ url: `smtp://127.0.0.1:${await refusedPort()}`, from: TEST_FROM, timeoutMs: 1500 }),
    },
  }),
);
