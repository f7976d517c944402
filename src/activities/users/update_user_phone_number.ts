import { Type, type Static } from "@sinclair/typebox";
import { Id, PhoneNumber } from "../../schemas/common.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { VerificationTokenParam, updateContact } from "./contact-verification.ts";

// The swagger: "Setting this to an empty string will remove the user's phone number."
const Params = Type.Object({
  userId: Id("user"),
  userPhoneNumber: Type.Union([PhoneNumber, Type.Literal("")], { errorMessage: "must be an E.164 phone number, or empty to remove it" }),
  verificationToken: Type.Optional(VerificationTokenParam),
});

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  return updateContact(
    ctx,
    "phone",
    { userId: p.userId, value: p.userPhoneNumber, verificationToken: p.verificationToken },
    "parameters.userPhoneNumber",
  );
}

export const updateUserPhoneNumber = defineActivity({
  type: "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER",
  resource: "USER",
  action: "UPDATE",
  kind: "UPDATE_USER_PHONE_NUMBER",
  summary:
    'Set (or, with "", remove) a user\'s phone number. With a verificationToken (SMS) proving the new number it is verified; without one it is unverified.',
  params: Params,
  returns: Type.Object({ userId: Type.String() }),
  execute,
});
