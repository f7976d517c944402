import { Type } from "@sinclair/typebox";
import { notFound } from "../errors.ts";
import { Id, OrganizationId } from "../schemas/common.ts";
import { authenticatorView, AuthenticatorSchema } from "../store/authenticators.ts";
import { findUser } from "../store/users.ts";
import { ownedBy } from "../store/util.ts";
import { defineQuery } from "./define.ts";

export const getAuthenticator = defineQuery({
  op: "get_authenticator",
  summary: "Get one passkey (authenticator) of the organization.",
  request: Type.Object({ organizationId: OrganizationId, authenticatorId: Id("authenticator") }),
  response: Type.Object({ authenticator: AuthenticatorSchema }),
  async run({ db, organization }, req) {
    const row = ownedBy(
      await db.selectFrom("authenticators").selectAll().where("id", "=", req.authenticatorId).executeTakeFirst(),
      organization.id,
    );
    if (!row) throw notFound(`no authenticator ${req.authenticatorId} in organization ${organization.id}`);
    return { authenticator: authenticatorView(row) };
  },
});

export const getAuthenticators = defineQuery({
  op: "get_authenticators",
  summary: "The passkeys (authenticators) of a user, oldest first.",
  request: Type.Object({ organizationId: OrganizationId, userId: Id("user") }),
  response: Type.Object({ authenticators: Type.Array(AuthenticatorSchema) }),
  async run({ db, organization }, req) {
    if (!(await findUser(db, organization.id, req.userId))) throw notFound(`no user ${req.userId} in organization ${organization.id}`);
    const rows = await db
      .selectFrom("authenticators")
      .selectAll()
      .where("user_id", "=", req.userId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return { authenticators: rows.map(authenticatorView) };
  },
});
