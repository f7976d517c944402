import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists } from "../../errors.ts";
import { Id, Name, maxItems } from "../../schemas/common.ts";
import { isUniqueViolation, newId } from "../../store/util.ts";
import { lockPrivateKeys } from "../../signing/tags.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";

const Params = Type.Object({
  privateKeyTagName: Name("privateKeyTagName"),
  privateKeyIds: maxItems(Id("private key"), "privateKeyIds", 100),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  const privateKeyIds = [...new Set(p.privateKeyIds)];
  await lockPrivateKeys(tx, organization.id, privateKeyIds, "parameters.privateKeyIds");
  const privateKeyTagId = newId();
  try {
    await tx
      .insertInto("private_key_tags")
      .values({ id: privateKeyTagId, organization_id: organization.id, name: p.privateKeyTagName, created_at: now, updated_at: now })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err, "private_key_tags"))
      throw alreadyExists(`a private key tag named ${JSON.stringify(p.privateKeyTagName)} already exists`);
    throw err;
  }
  if (privateKeyIds.length)
    await tx
      .insertInto("private_key_tag_members")
      .values(privateKeyIds.map((private_key_id) => ({ tag_id: privateKeyTagId, private_key_id })))
      .execute();
  return { privateKeyTagId, privateKeyIds };
}

export const createPrivateKeyTag = defineActivity({
  type: "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG",
  resource: "PRIVATE_KEY",
  action: "CREATE",
  kind: "CREATE_PRIVATE_KEY_TAG",
  summary: "Create a private key tag (unique name per organization) and apply it to private keys.",
  params: Params,
  returns: Type.Object({ privateKeyTagId: Type.String(), privateKeyIds: Type.Array(Type.String()) }),
  execute,
});
