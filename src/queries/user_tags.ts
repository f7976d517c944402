import { Type } from "@sinclair/typebox";
import { OrganizationId } from "../schemas/common.ts";
import { UserTag } from "../schemas/views.ts";
import { timestampObject } from "../store/util.ts";
import { defineQuery } from "./define.ts";

export const listUserTags = defineQuery({
  op: "list_user_tags",
  summary: "List an organization's user tags.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ userTags: Type.Array(UserTag) }),
  async run({ db, organization }) {
    const rows = await db
      .selectFrom("user_tags")
      .selectAll()
      .where("organization_id", "=", organization.id)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return {
      userTags: rows.map((t) => ({
        tagId: t.id,
        tagName: t.name,
        tagType: "TAG_TYPE_USER" as const,
        createdAt: timestampObject(t.created_at),
        updatedAt: timestampObject(t.updated_at),
      })),
    };
  },
});
