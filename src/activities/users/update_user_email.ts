import { Type, type Static } from "@sinclair/typebox";
import { Email, Id } from "../../schemas/common.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { VerificationTokenParam, updateContact } from "./contact-verification.ts";

// The swagger: "Setting this to an empty string will remove the user's email."
const Params = Type.Object({
  userId: Id("user"),
  userEmail: Type.Union([Email, Type.Literal("")], { errorMessage: "must be a valid email address, or empty to remove it" }),
  verificationToken: Type.Optional(VerificationTokenParam),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  return updateContact(
    ctx,
    "email",
    { userId: p.userId, value: p.userEmail, verificationToken: p.verificationToken },
    "parameters.userEmail",
  );
}

export const updateUserEmail = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
  resource: "USER",
  action: "UPDATE",
  kind: "UPDATE_USER_EMAIL",
  summary:
    'Set (or, with "", remove) a user\'s email. With a verificationToken proving the new address it is verified; without one it is unverified.',
  params: Params,
  returns: Type.Object({ userId: Type.String() }),
  execute,
});
