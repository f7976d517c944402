import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists, notFound } from "../../errors.ts";
import { Id, Name, maxItems } from "../../schemas/common.ts";
import { lockingRead } from "../../store/locks.ts";
import { isUniqueViolation } from "../../store/util.ts";
import { lockPrivateKeys } from "../../signing/tags.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  privateKeyTagId: Id("private key tag"),
  newPrivateKeyTagName: Type.Optional(Name("newPrivateKeyTagName")),
  addPrivateKeyIds: maxItems(Id("private key"), "addPrivateKeyIds", 100),
  removePrivateKeyIds: maxItems(Id("private key"), "removePrivateKeyIds", 100),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const q = tx
    .selectFrom("private_key_tags")
    .select("id")
    .where("organization_id", "=", organization.id)
    .where("id", "=", p.privateKeyTagId);
  const tag = await lockingRead(tx, q).executeTakeFirst();
  if (!tag) throw notFound(`no private key tag ${p.privateKeyTagId} in organization ${organization.id}`);
  const add = [...new Set(p.addPrivateKeyIds)];
  await lockPrivateKeys(tx, organization.id, add, "parameters.addPrivateKeyIds");
  try {
    await tx
      .updateTable("private_key_tags")
      .set({ updated_at: now, ...(p.newPrivateKeyTagName !== undefined ? { name: p.newPrivateKeyTagName } : {}) })
      .where("id", "=", tag.id)
      .execute();
  } catch (err) {
    if (isUniqueViolation(err, "private_key_tags"))
      throw alreadyExists(`a private key tag named ${JSON.stringify(p.newPrivateKeyTagName)} already exists`);
    throw err;
  }
  if (p.removePrivateKeyIds.length) {
    await tx
      .deleteFrom("private_key_tag_members")
      .where("tag_id", "=", tag.id)
      .where("private_key_id", "in", [...new Set(p.removePrivateKeyIds)])
      .execute();
  }
  if (add.length) {
    const have = new Set(
      (
        await tx
          .selectFrom("private_key_tag_members")
          .select("private_key_id")
          .where("tag_id", "=", tag.id)
          .where("private_key_id", "in", add)
          .execute()
      ).map((r) => r.private_key_id),
    );
    const rows = add.filter((id) => !have.has(id)).map((private_key_id) => ({ tag_id: tag.id, private_key_id }));
    if (rows.length) await tx.insertInto("private_key_tag_members").values(rows).execute();
  }
  return { privateKeyTagId: tag.id };
}

export const updatePrivateKeyTag = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_PRIVATE_KEY_TAG",
  resource: "PRIVATE_KEY",
  action: "UPDATE",
  kind: "UPDATE_PRIVATE_KEY_TAG",
  summary: "Rename a private key tag, and add it to or remove it from private keys.",
  params: Params,
  returns: Type.Object({ privateKeyTagId: Type.String() }),
  execute,
});
