// get_organization's organizationData.invitations (docs/invitations.md §6), read with the
// official SDK client (@turnkey/http, over HTTP) on both engines: the SDK's v1Invitation of each invitation, never its
// token nor the token's digest, only the organization's own, and at most
// MAX_LISTED_INVITATIONS, the most recent.
import { after, before, it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { TurnkeyClient } from "@turnkey/http";
import { completed, perEngine, type Creds } from "../helpers/inproc.ts";
import { sinkPerHarness } from "../helpers/smtp-sink.ts";
import { invite, subOrg } from "../helpers/invitations.ts";
import { deleteInvitation } from "../../src/activities/invitations/delete_invitation.ts";
import { createUserTag } from "../../src/activities/users/create_user_tag.ts";
import { MAX_LISTED_INVITATIONS } from "../../src/store/invitations.ts";
import { newId } from "../../src/store/util.ts";

/** The fields of the SDK type v1Invitation (@turnkey/http public_api.types.d.ts). */
const V1_INVITATION_FIELDS = [
  "accessType",
  "createdAt",
  "invitationId",
  "receiverEmail",
  "receiverUserName",
  "receiverUserTags",
  "senderUserId",
  "status",
  "updatedAt",
];

const s = sinkPerHarness();
perEngine(
  "get_organization: invitations",
  (h) => {
    after(s.stop);
    let baseUrl = "";
    before(async () => {
      baseUrl = await h().app.listen({ port: 0, host: "127.0.0.1" });
    });
    /** The official client of `as`, over HTTP. */
    const client = (as: Creds = h().root) =>
      new TurnkeyClient({ baseUrl }, new ApiKeyStamper({ apiPublicKey: as.key.publicKey, apiPrivateKey: as.key.privateKey }));

    it("lists the organization's invitations as v1Invitation, oldest first, with their status; no token, no digest", async () => {
      const tag = completed(
        await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "invited", userIds: [] }),
        createUserTag,
      ).userTagId;
      const a = await invite(h(), s.sink(), { receiverUserName: "Ada", receiverUserTags: [tag], accessType: "ACCESS_TYPE_WEB" });
      const b = await invite(h(), s.sink(), { receiverUserName: "Bob", accessType: "ACCESS_TYPE_API" });
      completed(
        await h().submit("delete_invitation", "ACTIVITY_TYPE_DELETE_INVITATION", { invitationId: b.invitationId }),
        deleteInvitation,
      );
      // Another organization's invitation is not this one's.
      const other = await subOrg(h(), "tenant");
      const theirs = await invite(h(), s.sink(), {}, { as: other });

      const sdk = client();
      const { organizationData } = await sdk.getOrganization({ organizationId: h().root.organizationId });
      const invitations = organizationData.invitations ?? [];
      assert.deepEqual(
        invitations.map((i) => i.invitationId),
        [a.invitationId, b.invitationId],
      );
      for (const i of invitations) assert.deepEqual(Object.keys(i).sort(), V1_INVITATION_FIELDS);
      const [ia, ib] = invitations;
      assert.equal(ia!.receiverUserName, "Ada");
      assert.equal(ia!.receiverEmail, a.email);
      assert.deepEqual(ia!.receiverUserTags, [tag]);
      assert.equal(ia!.accessType, "ACCESS_TYPE_WEB");
      assert.equal(ia!.status, "INVITATION_STATUS_CREATED");
      assert.equal(ia!.senderUserId, h().root.userId);
      assert.match(ia!.createdAt.seconds, /^[0-9]+$/);
      assert.equal(ib!.status, "INVITATION_STATUS_REVOKED");
      assert.equal(ib!.accessType, "ACCESS_TYPE_API");

      const raw = JSON.stringify(organizationData);
      for (const secret of [a.token, b.token, theirs.token]) assert.ok(!raw.includes(secret), "no invitation token in the answer");
      const digests = await h()
        .service.store.db.selectFrom("invitations")
        .select("token_digest")
        .where("token_digest", "is not", null)
        .execute();
      assert.ok(digests.length >= 2);
      for (const d of digests) assert.ok(!raw.includes(d.token_digest!), "no token digest in the answer");
      assert.ok(!/token/i.test(raw), "no token field");

      // The sub-organization reads its own, and its parent reads the same.
      const own = await client(other).getOrganization({ organizationId: other.organizationId });
      assert.deepEqual(
        (own.organizationData.invitations ?? []).map((i) => i.invitationId),
        [theirs.invitationId],
      );
      const byParent = await sdk.getOrganization({ organizationId: other.organizationId });
      assert.deepEqual(
        (byParent.organizationData.invitations ?? []).map((i) => i.invitationId),
        [theirs.invitationId],
      );
    });

    it(`lists at most ${MAX_LISTED_INVITATIONS}: the most recent, oldest first`, async () => {
      const org = await h().newOrg("many invitations");
      // Rows as create_invitations stores them, written directly: the mail and send limits
      // (docs/invitations.md §3.1) would take hours to let this many through.
      const total = MAX_LISTED_INVITATIONS + 5;
      const base = Date.now() - total * 1000;
      const rows = Array.from({ length: total }, (_, n) => ({
        id: newId(),
        organization_id: org.organizationId,
        sender_user_id: org.userId,
        receiver_user_name: `invitee ${n}`,
        receiver_email: `invitee-${n}@example.com`,
        receiver_user_tags: "[]",
        access_type: "ACCESS_TYPE_ALL" as const,
        status: "INVITATION_STATUS_ACCEPTED" as const,
        token_digest: null,
        accepted_user_id: null,
        expires_at: base + n * 1000 + 72 * 3600_000,
        created_at: base + n * 1000,
        updated_at: base + n * 1000,
      }));
      await h().service.store.db.insertInto("invitations").values(rows).execute();
      const { organizationData } = await client(org).getOrganization({ organizationId: org.organizationId });
      const names = (organizationData.invitations ?? []).map((i) => i.receiverUserName);
      assert.equal(names.length, MAX_LISTED_INVITATIONS);
      assert.equal(names[0], `invitee ${total - MAX_LISTED_INVITATIONS}`, "the oldest are left out");
      assert.equal(names.at(-1), `invitee ${total - 1}`, "the newest is last");
    });
  },
  undefined,
  s.options,
);
