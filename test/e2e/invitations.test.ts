// Invitations and the rest of the identity surface end to end, on each engine: a child-process
// server whose mail goes to a real SMTP server (the sink). The organization's backend uses the
// official clients (@turnkey/sdk-server's apiClient, @turnkey/http's TurnkeyClient): it invites
// by email, the invitee's token is read from the mail, the backend accepts with the invitee's
// new API key (accept_invitation has no SDK method: the official client's own stamped
// `request`), and that key then works as the invited user. Also update_user_tag,
// list_app_proofs and get_active_policies through the official clients.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Turnkey } from "@turnkey/sdk-server";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import {
  engines,
  newInstance,
  rejection,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { SmtpSink } from "../helpers/smtp-sink.ts";
import { tokenFrom } from "../helpers/invitations.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

const now = () => String(Date.now());

for (const spec of engines()) {
  describe(`invitations through the SDKs [${spec.name}]`, { skip: spec.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let init: InitResult;
    let backend: ReturnType<Turnkey["apiClient"]>;

    before(async () => {
      sink = await SmtpSink.start();
      inst = await newInstance(spec.name, { SMTP_URL: sink.url, SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>" });
      init = await sigilInit(inst, ["--name", "Acme Team"]);
      server = await startServer(inst);
      backend = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
    });
    after(async () => {
      await server?.stop();
      await sink?.stop();
      await inst?.cleanup();
    });

    const accept = (params: Record<string, unknown>) =>
      backend.request<
        Record<string, unknown>,
        { activity: { status: string; result: { acceptInvitationResult: { invitationId: string; userId: string } } } }
      >("/public/v1/submit/accept_invitation", {
        type: "ACTIVITY_TYPE_ACCEPT_INVITATION_V2",
        timestampMs: now(),
        organizationId: init.organizationId,
        parameters: params,
      });

    it("invite by email → token from the mail → accept with a new API key → the key works as the invited user, with its tags", async () => {
      const { userTagId } = await backend.createUserTag({ userTagName: "engineers", userIds: [] });
      const email = `ada.${spec.name}@example.com`;
      const mark = sink.mark();
      const { invitationIds } = await backend.createInvitations({
        invitations: [
          {
            receiverUserName: "Ada",
            receiverUserEmail: email,
            receiverUserTags: [userTagId],
            accessType: "ACCESS_TYPE_API",
            senderUserId: init.userId,
          },
        ],
      });
      const mail = await sink.nextMail(email, mark);
      assert.equal(mail.subject, "Your invitation to Acme Team");
      assert.ok(mail.text.includes(invitationIds[0]!));
      const token = tokenFrom(mail);

      const key = generateP256KeyPair();
      const apiKey = { apiKeyName: "ada", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" };
      const res = await accept({ invitationId: invitationIds[0], invitationToken: token, apiKey });
      assert.equal(res.activity.status, "ACTIVITY_STATUS_COMPLETED");
      const { userId } = res.activity.result.acceptInvitationResult;

      const ada = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
      const me = await ada.getWhoami({ organizationId: init.organizationId });
      assert.equal(me.userId, userId);
      assert.equal(me.username, "Ada");
      const { user } = await backend.getUser({ userId });
      assert.equal(user.userEmail, email);
      assert.deepEqual(user.userTags, [userTagId]);

      // The token worked once.
      const again = await rejection(
        accept({
          invitationId: invitationIds[0],
          invitationToken: token,
          apiKey: { ...apiKey, publicKey: generateP256KeyPair().publicKey },
        }),
      );
      assert.match(again.message, /no live invitation/);
    });

    it("a deleted invitation's token stops working", async () => {
      const email = `bob.${spec.name}@example.com`;
      const mark = sink.mark();
      const { invitationIds } = await backend.createInvitations({
        invitations: [
          {
            receiverUserName: "Bob",
            receiverUserEmail: email,
            receiverUserTags: [],
            accessType: "ACCESS_TYPE_ALL",
            senderUserId: init.userId,
          },
        ],
      });
      const token = tokenFrom(await sink.nextMail(email, mark));
      const { invitationId } = await backend.deleteInvitation({ invitationId: invitationIds[0]! });
      assert.equal(invitationId, invitationIds[0]);
      const refused = await rejection(
        accept({
          invitationId,
          invitationToken: token,
          apiKey: { apiKeyName: "bob", publicKey: generateP256KeyPair().publicKey, curveType: "API_KEY_CURVE_P256" },
        }),
      );
      assert.match(refused.message, /no live invitation/);
    });

    it("update_user_tag renames a tag and moves it between users (sdk-server)", async () => {
      const { userIds } = await backend.createUsers({
        users: [{ userName: "carol", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      const { userTagId } = await backend.createUserTag({ userTagName: "on-call", userIds: [init.userId] });
      const r = await backend.updateUserTag({
        userTagId,
        newUserTagName: "on-call-week-2",
        addUserIds: [userIds[0]!],
        removeUserIds: [init.userId],
      });
      assert.equal(r.userTagId, userTagId);
      const { userTags } = await backend.listUserTags({});
      assert.equal(userTags.find((t) => t.tagId === userTagId)?.tagName, "on-call-week-2");
      assert.deepEqual((await backend.getUser({ userId: userIds[0]! })).user.userTags, [userTagId]);
      assert.ok(!(await backend.getUser({ userId: init.userId })).user.userTags.includes(userTagId));
    });

    it("list_app_proofs answers an activity's proofs and get_active_policies each policy's window (@turnkey/http)", async () => {
      const http = new TurnkeyClient(
        { baseUrl: server.url },
        new ApiKeyStamper({ apiPublicKey: init.apiPublicKey, apiPrivateKey: init.apiPrivateKey }),
      );
      const { activity } = await http.createUserTag({
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
        timestampMs: now(),
        organizationId: init.organizationId,
        parameters: { userTagName: "proved", userIds: [] },
        generateAppProofs: true,
      });
      const { appProofs } = await http.getAppProofs({ organizationId: init.organizationId, activityId: activity.id });
      assert.equal(appProofs.length, 1);
      assert.deepEqual(appProofs, (activity as { appProofs?: unknown }).appProofs);

      const { policyId } = await backend.createPolicy({
        policyName: "office hours",
        effect: "EFFECT_ALLOW",
        condition: "activity.resource == 'WALLET'",
        consensus: "approvers.count() >= 1",
        notes: "",
        time: "time.now < Timestamp('2000-01-01T00:00:00Z')",
      } as Parameters<typeof backend.createPolicy>[0]);
      const active = await http.getActivePolicies({ organizationId: init.organizationId });
      const status = active.statuses.find((s) => s.policyId === policyId);
      assert.deepEqual(status, {
        organizationId: init.organizationId,
        policyId,
        active: false,
        timeExpr: "time.now < Timestamp('2000-01-01T00:00:00Z')",
      });
      assert.match(active.evaluatedAtMs, /^\d+$/);
    });
  });
}
