// Private key queries (get_private_key, list_private_keys, list_private_key_tags): what was
// created, never the key (it stays sealed in the store; docs/signing.md §3).
import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId, Timestamp } from "../schemas/common.ts";
import { privateKeyViews, PrivateKeySchema } from "../signing/private-keys.ts";
import { ownedBy, timestampObject } from "../store/util.ts";
import { defineQuery } from "./define.ts";

export const getPrivateKey = defineQuery({
  op: "get_private_key",
  summary: "Get a private key: its public key, addresses and tags (never the key).",
  request: Type.Object({ organizationId: OrganizationId, privateKeyId: Id("private key") }),
  response: Type.Object({ privateKey: PrivateKeySchema }),
  async run({ db, organization }, req) {
    const row = ownedBy(
      await db.selectFrom("private_keys").selectAll().where("id", "=", req.privateKeyId).executeTakeFirst(),
      organization.id,
    );
    if (!row) throw notFound(`no private key ${req.privateKeyId} in organization ${organization.id}`);
    const [privateKey] = await privateKeyViews(db, [row]);
    return { privateKey: privateKey! };
  },
});

export const listPrivateKeys = defineQuery({
  op: "list_private_keys",
  summary: "List the organization's private keys, oldest first.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ privateKeys: Type.Array(PrivateKeySchema) }),
  async run({ db, organization }) {
    const rows = await db
      .selectFrom("private_keys")
      .selectAll()
      .where("organization_id", "=", organization.id)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return { privateKeys: await privateKeyViews(db, rows) };
  },
});

const PrivateKeyTag = Type.Object({
  tagId: Type.String(),
  tagName: Type.String(),
  tagType: Type.Literal("TAG_TYPE_PRIVATE_KEY"),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const listPrivateKeyTags = defineQuery({
  op: "list_private_key_tags",
  summary: "List the organization's private key tags.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ privateKeyTags: Type.Array(PrivateKeyTag) }),
  async run({ db, organization }) {
    const rows = await db
      .selectFrom("private_key_tags")
      .selectAll()
      .where("organization_id", "=", organization.id)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return {
      privateKeyTags: rows.map((t) => ({
        tagId: t.id,
        tagName: t.name,
        tagType: "TAG_TYPE_PRIVATE_KEY" as const,
        createdAt: timestampObject(t.created_at),
        updatedAt: timestampObject(t.updated_at),
      })),
    };
  },
});
