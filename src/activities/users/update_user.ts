import { Type, type Static } from "@sinclair/typebox";
import { alreadyExists, invalid, notFound } from "../../errors.ts";
import { Email, Id, Name, PhoneNumber, maxItems } from "../../schemas/common.ts";
import { lockUsers } from "../../store/locks.ts";
import { isUniqueViolation } from "../../store/util.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { requireUserTags } from "./new-users.ts";

// An empty string clears the email or phone number.
const Params = Type.Object({
  userId: Id("user"),
  userName: Type.Optional(Name("userName")),
  userEmail: Type.Optional(Type.Union([Email, Type.Literal("")], { errorMessage: "must be a valid email address, or empty to clear it" })),
  userPhoneNumber: Type.Optional(
    Type.Union([PhoneNumber, Type.Literal("")], { errorMessage: "must be an E.164 phone number, or empty to clear it" }),
  ),
  userTagIds: Type.Optional(maxItems(Id("user tag"), "userTagIds", 100)),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  if (p.userName === undefined && p.userEmail === undefined && p.userPhoneNumber === undefined && p.userTagIds === undefined) {
    throw invalid("nothing to update: give at least one of userName, userEmail, userPhoneNumber, userTagIds");
  }
  // The user's lock makes "the user exists" hold until commit (delete_users locks it too), so
  // an update never reports success for a user deleted meanwhile, and tags are never applied
  // to one (a foreign-key failure).
  const [userId] = await lockUsers(tx, organization.id, [p.userId]);
  if (!userId) throw notFound(`no user ${p.userId} in organization ${organization.id}`);
  const user = { id: userId };
  // Tags are locked (shared) before this user's member rows are touched: delete_user_tags
  // locks the tags first too, so neither can wait on the other's member rows while holding
  // what the other needs.
  const tagIds = p.userTagIds?.length ? await requireUserTags(tx, organization.id, p.userTagIds, "parameters.userTagIds") : [];
  const set: Record<string, string | number | null> = { updated_at: now };
  if (p.userName !== undefined) set.name = p.userName;
  if (p.userEmail !== undefined) {
    set.email = p.userEmail || null;
    set.email_normalized = p.userEmail ? p.userEmail.toLowerCase() : null;
    // Only a verification token verifies a contact (update_user_email); a contact set here is not.
    set.email_verified_at = null;
  }
  if (p.userPhoneNumber !== undefined) {
    set.phone = p.userPhoneNumber || null;
    set.phone_verified_at = null;
  }
  try {
    await tx.updateTable("users").set(set).where("id", "=", user.id).execute();
  } catch (err) {
    if (isUniqueViolation(err, "users"))
      throw alreadyExists("parameters.userEmail: a user with this email already exists in the organization");
    throw err;
  }
  if (p.userTagIds !== undefined) {
    await tx.deleteFrom("user_tag_members").where("user_id", "=", user.id).execute();
    if (tagIds.length)
      await tx
        .insertInto("user_tag_members")
        .values(tagIds.map((tag_id) => ({ tag_id, user_id: user.id })))
        .execute();
  }
  return { userId: user.id };
}

const Result = Type.Object({ userId: Type.String() });

export const updateUser = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_USER",
  resource: "USER",
  action: "UPDATE",
  kind: "UPDATE_USER",
  summary: "Update a user's name, email, phone number or tags (userTagIds replaces the tag set).",
  params: Params,
  returns: Result,
  execute,
});
