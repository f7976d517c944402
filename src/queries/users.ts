import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { User } from "../schemas/views.ts";
import { findUser, listUserRows, userViews } from "../store/users.ts";
import { defineQuery } from "./define.ts";

export const getUser = defineQuery({
  op: "get_user",
  summary: "Get a user with its credentials and tags.",
  request: Type.Object({ organizationId: OrganizationId, userId: Id("user") }),
  response: Type.Object({ user: User }),
  async run({ db, organization }, req) {
    const row = await findUser(db, organization.id, req.userId);
    if (!row) throw notFound(`no user ${req.userId} in organization ${organization.id}`);
    const [user] = await userViews(db, [row]);
    if (!user) throw notFound(`no user ${req.userId} in organization ${organization.id}`);
    return { user };
  },
});

export const listUsers = defineQuery({
  op: "list_users",
  summary: "List every user of an organization.",
  request: Type.Object({ organizationId: OrganizationId }),
  response: Type.Object({ users: Type.Array(User) }),
  async run({ db, organization }) {
    return { users: await userViews(db, await listUserRows(db, organization.id)) };
  },
});
