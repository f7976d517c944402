// Invitations in tests: create one through the API and read its token from the mail the SMTP
// sink received (the token is the first line of the text part, docs/invitations.md §3.2).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { completed, type CallOptions, type Creds, type Harness, type Json } from "./inproc.ts";
import type { Mail, SmtpSink } from "./smtp-sink.ts";
import { createInvitations } from "../../src/activities/invitations/create_invitations.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

export const freshEmail = () => `invitee-${randomBytes(5).toString("hex")}@example.com`;

export const invitationParams = (as: Creds, over: Json = {}): Json => ({
  receiverUserName: "Invitee",
  receiverUserEmail: freshEmail(),
  receiverUserTags: [],
  accessType: "ACCESS_TYPE_ALL",
  senderUserId: as.userId,
  ...over,
});

export interface SentInvitation {
  invitationId: string;
  token: string;
  email: string;
  mail: Mail;
}

/** The token an invitation mail carries: its first line. */
export function tokenFrom(mail: Mail): string {
  const token = mail.text.split(/\r?\n/)[0]!.trim();
  assert.match(token, /^[A-Za-z0-9_-]{43}$/, `an invitation token on the first line of ${JSON.stringify(mail.text.slice(0, 200))}`);
  return token;
}

/** One invitation by `as` (root by default), with its mailed token. */
export async function invite(h: Harness, sink: SmtpSink, over: Json = {}, opts: CallOptions = {}): Promise<SentInvitation> {
  const as = opts.as ?? h.root;
  const params = invitationParams(as, over);
  const mark = sink.mark();
  const res = await h.submit("create_invitations", "ACTIVITY_TYPE_CREATE_INVITATIONS", { invitations: [params] }, opts);
  const [invitationId] = completed(res, createInvitations).invitationIds;
  const mail = await sink.nextMail(params.receiverUserEmail as string, mark);
  return { invitationId: invitationId!, token: tokenFrom(mail), email: params.receiverUserEmail as string, mail };
}

/** A sub-organization of `parent` (root by default) whose root user holds one API key: a tenant. */
export async function subOrg(h: Harness, name: string, parent?: Creds): Promise<Creds> {
  const key = generateP256KeyPair();
  const res = await h.submit(
    "create_sub_organization",
    "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
    {
      subOrganizationName: name,
      rootQuorumThreshold: 1,
      rootUsers: [
        {
          userName: "tenant",
          apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
          authenticators: [],
          oauthProviders: [],
        },
      ],
    },
    parent ? { as: parent } : {},
  );
  const sub = completed(res, "createSubOrganizationResultV8");
  return { organizationId: sub.subOrganizationId as string, userId: sub.rootUserIds[0] as string, key };
}

/** The stored invitation row (the SDK's view of it is get_organization's organizationData.invitations). */
export async function invitationRow(h: Harness, invitationId: string) {
  return h.service.store.db.selectFrom("invitations").selectAll().where("id", "=", invitationId).executeTakeFirstOrThrow();
}

export async function activityCount(h: Harness): Promise<number> {
  const r = await h.service.store.db
    .selectFrom("activities")
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
