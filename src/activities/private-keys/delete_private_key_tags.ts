import { Type, type Static } from "@sinclair/typebox";
import { notFound } from "../../errors.ts";
import { Id, maxItems } from "../../schemas/common.ts";
import { lockingRead } from "../../store/locks.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  privateKeyTagIds: maxItems(Id("private key tag"), "privateKeyTagIds", 100, 1),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization } = ctx;
  const ids = [...new Set(p.privateKeyTagIds)].sort();
  const q = tx
    .selectFrom("private_key_tags")
    .select("id")
    .where("organization_id", "=", organization.id)
    .where("id", "in", ids)
    .orderBy("id");
  const found = new Set((await lockingRead(tx, q).execute()).map((r) => r.id));
  const missing = ids.find((id) => !found.has(id));
  if (missing) throw notFound(`no private key tag ${missing} in organization ${organization.id}`);
  const members = await tx
    .selectFrom("private_key_tag_members")
    .select("private_key_id")
    .where("tag_id", "in", ids)
    .orderBy("private_key_id")
    .execute();
  await tx.deleteFrom("private_key_tag_members").where("tag_id", "in", ids).execute();
  await tx.deleteFrom("private_key_tags").where("id", "in", ids).execute();
  return { privateKeyTagIds: ids, privateKeyIds: [...new Set(members.map((m) => m.private_key_id))] };
}

export const deletePrivateKeyTags = defineActivity({
  type: "ACTIVITY_TYPE_DELETE_PRIVATE_KEY_TAGS",
  resource: "PRIVATE_KEY",
  action: "DELETE",
  kind: "DELETE_PRIVATE_KEY_TAGS",
  summary: "Delete private key tags; the result names the private keys that carried them.",
  params: Params,
  returns: Type.Object({ privateKeyTagIds: Type.Array(Type.String()), privateKeyIds: Type.Array(Type.String()) }),
  execute,
});
