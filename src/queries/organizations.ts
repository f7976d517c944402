// get_organization and get_organization_configs (docs/organizations.md §7.4): the organization
// as the SDK types v1OrganizationData and v1Config give it. A deleted organization never gets
// here: it is answered as an unknown one by authentication (docs/organizations.md §7.3).
import { Type } from "@sinclair/typebox";
import { OrganizationId, Timestamp } from "../schemas/common.ts";
import { Policy, User } from "../schemas/views.ts";
import { PrivateKeySchema, privateKeyViews } from "../signing/private-keys.ts";
import { FeatureSchema, featuresOf } from "../store/organization-features.ts";
import { Invitation } from "../schemas/invitation.ts";
import { invitationView, recentInvitationsOf } from "../store/invitations.ts";
import { policiesOf, policyView } from "../store/policies.ts";
import type { Executor } from "../store/schema.ts";
import { listUserRows, userViews } from "../store/users.ts";
import { listWalletRows, WalletSchema, walletView } from "../store/wallets.ts";
import { timestampObject } from "../store/util.ts";
import { defineQuery } from "./define.ts";

const Quorum = Type.Object({ threshold: Type.Integer(), userIds: Type.Array(Type.String()) });
const Tag = Type.Object({
  tagId: Type.String(),
  tagName: Type.String(),
  tagType: Type.Union([Type.Literal("TAG_TYPE_USER"), Type.Literal("TAG_TYPE_PRIVATE_KEY")]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** The root quorum as SDK type externaldatav1Quorum gives it: members in the order they were stored. */
async function rootQuorumOf(db: Executor, organizationId: string): Promise<{ threshold: number; userIds: string[] }> {
  const [org, members] = await Promise.all([
    db.selectFrom("organizations").select("root_quorum_threshold").where("id", "=", organizationId).executeTakeFirstOrThrow(),
    db.selectFrom("root_quorum_members").select("user_id").where("organization_id", "=", organizationId).orderBy("user_id").execute(),
  ]);
  return { threshold: Number(org.root_quorum_threshold), userIds: members.map((m) => m.user_id) };
}

export const getOrganizationConfigs = defineQuery({
  op: "get_organization_configs",
  summary: "Get the organization's features that are on and its root quorum.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ configs: Type.Object({ features: Type.Array(FeatureSchema), quorum: Quorum }) }),
  async run({ db, organization }) {
    const [features, quorum] = await Promise.all([featuresOf(db, organization.id), rootQuorumOf(db, organization.id)]);
    return { configs: { features, quorum } };
  },
});

export const getOrganization = defineQuery({
  op: "get_organization",
  summary: "Get the organization: its name, users, policies, private keys, wallets, tags, root quorum and features.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({
    organizationData: Type.Object({
      organizationId: Type.String(),
      name: Type.String(),
      users: Type.Array(User),
      policies: Type.Array(Policy),
      privateKeys: Type.Array(PrivateKeySchema),
      invitations: Type.Array(Invitation),
      tags: Type.Array(Tag),
      rootQuorum: Quorum,
      features: Type.Array(FeatureSchema),
      wallets: Type.Array(WalletSchema),
    }),
  }),
  async run({ db, organization }) {
    const id = organization.id;
    const [org, users, policies, keyRows, userTags, keyTags, rootQuorum, features, wallets, invitations] = await Promise.all([
      db.selectFrom("organizations").select("name").where("id", "=", id).executeTakeFirstOrThrow(),
      listUserRows(db, id).then((rows) => userViews(db, rows)),
      policiesOf(db, id),
      db.selectFrom("private_keys").selectAll().where("organization_id", "=", id).orderBy("created_at").orderBy("id").execute(),
      db.selectFrom("user_tags").selectAll().where("organization_id", "=", id).orderBy("created_at").orderBy("id").execute(),
      db.selectFrom("private_key_tags").selectAll().where("organization_id", "=", id).orderBy("created_at").orderBy("id").execute(),
      rootQuorumOf(db, id),
      featuresOf(db, id),
      listWalletRows(db, id),
      recentInvitationsOf(db, id),
    ]);
    const tag =
      (tagType: "TAG_TYPE_USER" | "TAG_TYPE_PRIVATE_KEY") => (t: { id: string; name: string; created_at: number; updated_at: number }) => ({
        tagId: t.id,
        tagName: t.name,
        tagType,
        createdAt: timestampObject(t.created_at),
        updatedAt: timestampObject(t.updated_at),
      });
    return {
      organizationData: {
        organizationId: id,
        name: org.name,
        users,
        policies: policies.map(policyView),
        privateKeys: await privateKeyViews(db, keyRows),
        // The most recent ones, bounded (docs/invitations.md §6); never a token or its digest.
        invitations: invitations.map(invitationView),
        tags: [...userTags.map(tag("TAG_TYPE_USER")), ...keyTags.map(tag("TAG_TYPE_PRIVATE_KEY"))],
        rootQuorum,
        features,
        wallets: wallets.map(walletView),
      },
    };
  },
});
