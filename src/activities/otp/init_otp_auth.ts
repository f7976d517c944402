// init_otp_auth V3 (docs/logins.md §9.5): the legacy start of an OTP login, which ends in
// otp_auth instead of verify_otp + otp_login. The same intent fields as init_otp V2 (SDK
// types v1InitOtpAuthIntentV3, v1InitOtpIntentV2), so it is init_otp: the same OTP row,
// content rules, limits and message (init_otp.ts); only the result is its own.
import { Type, type Static } from "@sinclair/typebox";
import { DEFAULT_OTP_LENGTH } from "../../logins/otp/code.ts";
import { defineActivity } from "../define.ts";
import { initOtp } from "./init_otp.ts";
import { checkInitOtp, InitOtpParamsV2 } from "./otp-fields.ts";

export const initOtpAuthV3 = defineActivity({
  type: "ACTIVITY_TYPE_INIT_OTP_AUTH_V3",
  result: "initOtpAuthResultV2",
  resource: "AUTH",
  action: "CREATE",
  kind: "INIT_OTP_AUTH",
  summary: "Send a one-time code by email or SMS for otp_auth (legacy OTP login); returns its id.",
  params: InitOtpParamsV2,
  returns: Type.Object({ otpId: Type.String() }),
  // docs/request-path.md §5: an authentication flow a parent's backend starts for its sub-organizations' users.
  parentMayStamp: true,
  policyParams: (p: Static<typeof InitOtpParamsV2>) => ({ otp_length: BigInt(p.otpLength ?? DEFAULT_OTP_LENGTH) }),
  check: (p) => checkInitOtp(p),
  execute: async (ctx, p) => ({ otpId: (await initOtp(ctx, p)).otpId }),
});
