import { after, it } from "node:test";
import assert from "node:assert/strict";
import { completed, forbidden, invalidRequest, notFound, perEngine, precondition, type Creds, type Json } from "../helpers/inproc.ts";
import { sinkPerHarness } from "../helpers/smtp-sink.ts";
import { SoftPasskey, TEST_WEBAUTHN, submitWithPasskey } from "../helpers/webauthn.ts";
import { activityCount, invitationRow, invite, subOrg } from "../helpers/invitations.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { acceptInvitation } from "../../src/activities/invitations/accept_invitation.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";

const OP = "accept_invitation";
const TYPE = "ACTIVITY_TYPE_ACCEPT_INVITATION_V2";
const apiKey = (publicKey: string): Json => ({ apiKeyName: "invitee", publicKey, curveType: "API_KEY_CURVE_P256" });

const s = sinkPerHarness({ webauthn: TEST_WEBAUTHN });
perEngine(
  "accept_invitation",
  (h) => {
    after(s.stop);
    const newTag = async (name: string) =>
      completed(await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: name, userIds: [] }), createUserTag)
        .userTagId;

    it("with the mailed token and an API key: the invited user exists with its name, email and tags, and its key works; the token works once", async () => {
      const tag = await newTag(`ops-${Date.now()}`);
      const sent = await invite(h(), s.sink(), { receiverUserName: "Grace", receiverUserTags: [tag], accessType: "ACCESS_TYPE_API" });
      const key = generateP256KeyPair();
      const res = await h().submit(OP, TYPE, {
        invitationId: sent.invitationId,
        invitationToken: sent.token,
        apiKey: apiKey(key.publicKey),
      });
      const r = completed(res, acceptInvitation);
      assert.equal(r.invitationId, sent.invitationId);
      // The token is a secret parameter (docs/activities.md §10): sealed in the row, redacted for readers.
      const recorded = await h()
        .service.store.db.selectFrom("activities")
        .select(["intent"])
        .where("id", "=", res.json.activity.id)
        .executeTakeFirstOrThrow();
      assert.ok(!recorded.intent.includes(sent.token), recorded.intent);
      assert.equal(
        (await h().query("get_activity", { activityId: res.json.activity.id })).json.activity.intent.acceptInvitationIntentV2
          .invitationToken,
        "<redacted>",
      );
      const user = (await h().query("get_user", { userId: r.userId })).json.user;
      assert.equal(user.userName, "Grace");
      assert.equal(user.userEmail, sent.email);
      assert.deepEqual(user.userTags, [tag]);
      const invitee: Creds = { organizationId: h().root.organizationId, userId: r.userId, key };
      const who = await h().query("whoami", {}, { as: invitee });
      assert.equal(who.json.userId, r.userId);
      const row = await invitationRow(h(), sent.invitationId);
      assert.equal(row.status, "INVITATION_STATUS_ACCEPTED");
      assert.equal(row.accepted_user_id, r.userId);
      assert.equal(row.token_digest, null);
      // Used: the same token again, with another key, finds no live invitation.
      notFound(
        await h().submit(OP, TYPE, {
          invitationId: sent.invitationId,
          invitationToken: sent.token,
          apiKey: apiKey(generateP256KeyPair().publicKey),
        }),
        /no live invitation/,
      );
    });

    it("an ACCESS_TYPE_WEB invitation registers a passkey, which then signs for the user; an API key is refused for it", async () => {
      const sent = await invite(h(), s.sink(), { accessType: "ACCESS_TYPE_WEB" });
      invalidRequest(
        await h().submit(OP, TYPE, {
          invitationId: sent.invitationId,
          invitationToken: sent.token,
          apiKey: apiKey(generateP256KeyPair().publicKey),
        }),
        /ACCESS_TYPE_WEB/,
        ["parameters.apiKey"],
      );
      invalidRequest(await h().submit(OP, TYPE, { invitationId: sent.invitationId, invitationToken: sent.token }), /passkey/, [
        "parameters.authenticator",
      ]);
      const passkey = new SoftPasskey();
      const r = completed(
        await h().submit(OP, TYPE, {
          invitationId: sent.invitationId,
          invitationToken: sent.token,
          authenticator: passkey.registration({ name: "laptop" }),
        }),
        acceptInvitation,
      );
      const user = (await h().query("get_user", { userId: r.userId })).json.user;
      assert.equal(user.authenticators.length, 1);
      assert.equal(user.apiKeys.length, 0);
      // The passkey signs as the new user.
      const res = await submitWithPasskey(
        h(),
        passkey,
        "create_authenticators",
        "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
        { userId: r.userId, authenticators: [new SoftPasskey().registration({ name: "phone" })] },
        h().root.organizationId,
      );
      completed(res, "createAuthenticatorsResult");
    });

    it("an ACCESS_TYPE_API invitation refuses a passkey; ACCESS_TYPE_ALL takes both", async () => {
      const api = await invite(h(), s.sink(), { accessType: "ACCESS_TYPE_API" });
      invalidRequest(
        await h().submit(OP, TYPE, {
          invitationId: api.invitationId,
          invitationToken: api.token,
          authenticator: new SoftPasskey().registration(),
        }),
        /ACCESS_TYPE_API/,
        ["parameters.authenticator"],
      );
      const all = await invite(h(), s.sink(), { accessType: "ACCESS_TYPE_ALL" });
      const r = completed(
        await h().submit(OP, TYPE, {
          invitationId: all.invitationId,
          invitationToken: all.token,
          authenticator: new SoftPasskey().registration(),
          apiKey: apiKey(generateP256KeyPair().publicKey),
        }),
        acceptInvitation,
      );
      const user = (await h().query("get_user", { userId: r.userId })).json.user;
      assert.equal(user.authenticators.length, 1);
      assert.equal(user.apiKeys.length, 1);
    });

    it("a wrong token, an unknown invitation, another organization's invitation: 404 alike, no user, nothing recorded", async () => {
      const sent = await invite(h(), s.sink());
      const count = await activityCount(h());
      const wrong = sent.token.slice(0, -1) + (sent.token.endsWith("A") ? "B" : "A");
      const key = apiKey(generateP256KeyPair().publicKey);
      notFound(await h().submit(OP, TYPE, { invitationId: sent.invitationId, invitationToken: wrong, apiKey: key }), /no live invitation/);
      notFound(
        await h().submit(OP, TYPE, { invitationId: "00000000-0000-4000-8000-000000000000", invitationToken: sent.token, apiKey: key }),
        /no live invitation/,
      );
      const other = await h().newOrg("Elsewhere");
      notFound(
        await h().submit(OP, TYPE, { invitationId: sent.invitationId, invitationToken: sent.token, apiKey: key }, { as: other }),
        /no live invitation/,
      );
      assert.equal(await activityCount(h()), count);
      assert.equal((await invitationRow(h(), sent.invitationId)).status, "INVITATION_STATUS_CREATED");
    });

    it("an expired invitation is refused (400 FAILED_PRECONDITION)", async () => {
      const sent = await invite(h(), s.sink());
      await h()
        .service.store.db.updateTable("invitations")
        .set({ expires_at: Date.now() - 1 })
        .where("id", "=", sent.invitationId)
        .execute();
      precondition(
        await h().submit(OP, TYPE, {
          invitationId: sent.invitationId,
          invitationToken: sent.token,
          apiKey: apiKey(generateP256KeyPair().publicKey),
        }),
        /expired/,
      );
    });

    it("a tag deleted since the invitation is not applied; the others are", async () => {
      const [kept, gone] = [await newTag(`kept-${Date.now()}`), await newTag(`gone-${Date.now()}`)];
      const sent = await invite(h(), s.sink(), { receiverUserTags: [kept, gone] });
      completed(await h().submit("delete_user_tags", "ACTIVITY_TYPE_DELETE_USER_TAGS", { userTagIds: [gone] }), "deleteUserTagsResult");
      const r = completed(
        await h().submit(OP, TYPE, {
          invitationId: sent.invitationId,
          invitationToken: sent.token,
          apiKey: apiKey(generateP256KeyPair().publicKey),
        }),
        acceptInvitation,
      );
      assert.deepEqual((await h().query("get_user", { userId: r.userId })).json.user.userTags, [kept]);
    });

    it("a parent organization's credential may not accept in its sub-organization (403, nothing created)", async () => {
      const tenant = await subOrg(h(), "Team");
      const sent = await invite(h(), s.sink(), {}, { as: tenant });
      forbidden(
        await h().submit(
          OP,
          TYPE,
          { invitationId: sent.invitationId, invitationToken: sent.token, apiKey: apiKey(generateP256KeyPair().publicKey) },
          { organizationId: tenant.organizationId },
        ),
        /parent organization/,
      );
      assert.equal((await invitationRow(h(), sent.invitationId)).status, "INVITATION_STATUS_CREATED");
      // The tenant's own credential relays it.
      completed(
        await h().submit(
          OP,
          TYPE,
          { invitationId: sent.invitationId, invitationToken: sent.token, apiKey: apiKey(generateP256KeyPair().publicKey) },
          { as: tenant },
        ),
        acceptInvitation,
      );
    });

    it("5 concurrent acceptances with the same token: exactly one user is created", async () => {
      const sent = await invite(h(), s.sink());
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          h().submit(OP, TYPE, {
            invitationId: sent.invitationId,
            invitationToken: sent.token,
            apiKey: apiKey(generateP256KeyPair().publicKey),
          }),
        ),
      );
      assert.deepEqual(
        answers.map((a) => a.status).sort(),
        [200, 404, 404, 404, 404],
        JSON.stringify(answers.map((a) => a.json.message ?? a.status)),
      );
      const users = await h().service.store.db.selectFrom("users").select("id").where("email", "=", sent.email).execute();
      assert.equal(users.length, 1);
    });

    it("refuses a malformed token (400 naming it)", async () => {
      invalidRequest(
        await h().submit(OP, TYPE, { invitationId: "00000000-0000-4000-8000-000000000000", invitationToken: "short" }),
        undefined,
        ["parameters.invitationToken"],
      );
    });
  },
  undefined,
  s.options,
);
