import { after, it } from "node:test";
import assert from "node:assert/strict";
import { assertIdempotent, completed, invalidRequest, notFound, perEngine, precondition } from "../helpers/inproc.ts";
import { sinkPerHarness } from "../helpers/smtp-sink.ts";
import { invitationRow, invite } from "../helpers/invitations.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { deleteInvitation } from "../../src/activities/invitations/delete_invitation.ts";
import { acceptInvitation } from "../../src/activities/invitations/accept_invitation.ts";

const OP = "delete_invitation";
const TYPE = "ACTIVITY_TYPE_DELETE_INVITATION";
const accept = (invitationId: string, invitationToken: string) => ({
  invitationId,
  invitationToken,
  apiKey: { apiKeyName: "k", publicKey: generateP256KeyPair().publicKey, curveType: "API_KEY_CURVE_P256" },
});

const s = sinkPerHarness();
perEngine(
  "delete_invitation",
  (h) => {
    after(s.stop);

    it("revokes: the mailed token stops working and the address may be invited again", async () => {
      const sent = await invite(h(), s.sink());
      const r = completed(await h().submit(OP, TYPE, { invitationId: sent.invitationId }), deleteInvitation);
      assert.equal(r.invitationId, sent.invitationId);
      const row = await invitationRow(h(), sent.invitationId);
      assert.equal(row.status, "INVITATION_STATUS_REVOKED");
      assert.equal(row.token_digest, null);
      notFound(
        await h().submit("accept_invitation", "ACTIVITY_TYPE_ACCEPT_INVITATION_V2", accept(sent.invitationId, sent.token)),
        /no live invitation/,
      );
      const again = await invite(h(), s.sink(), { receiverUserEmail: sent.email });
      assert.notEqual(again.invitationId, sent.invitationId);
    });

    it("the official client sends it; the same body twice is one activity", async () => {
      const sent = await invite(h(), s.sink());
      const sdk = await h().sdk();
      assert.equal((await sdk.deleteInvitation({ invitationId: sent.invitationId })).invitationId, sent.invitationId);
      const other = await invite(h(), s.sink());
      await assertIdempotent(h(), OP, TYPE, { invitationId: other.invitationId });
    });

    it("an unknown invitation or another organization's is 404; a revoked or accepted one is 400 FAILED_PRECONDITION", async () => {
      notFound(await h().submit(OP, TYPE, { invitationId: "00000000-0000-4000-8000-000000000000" }), /no invitation/);
      const sent = await invite(h(), s.sink());
      notFound(await h().submit(OP, TYPE, { invitationId: sent.invitationId }, { as: await h().newOrg("Other") }), /no invitation/);
      completed(await h().submit(OP, TYPE, { invitationId: sent.invitationId }), deleteInvitation);
      precondition(await h().submit(OP, TYPE, { invitationId: sent.invitationId }), /already deleted/);
      const accepted = await invite(h(), s.sink());
      completed(
        await h().submit("accept_invitation", "ACTIVITY_TYPE_ACCEPT_INVITATION_V2", accept(accepted.invitationId, accepted.token)),
        acceptInvitation,
      );
      precondition(await h().submit(OP, TYPE, { invitationId: accepted.invitationId }), /already accepted/);
    });

    it("refuses a malformed id (400)", async () => {
      invalidRequest(await h().submit(OP, TYPE, { invitationId: "nope" }), undefined, ["parameters.invitationId"]);
    });
  },
  undefined,
  s.options,
);
