import { Type } from "@sinclair/typebox";
import { ApiKeyParamsV2, Email, Id, Name, PhoneNumber, maxItems } from "../../schemas/common.ts";

export const MAX_USERS_PER_REQUEST = 100;
export const MAX_KEYS_PER_REQUEST = 10;

// Passkeys and OAuth providers: the field is required (the SDK always sends it) but must
// be empty until those features land — see rejectUnsupportedCredentials.
const Unsupported = (what: string) => maxItems(Type.Unknown(), what, 10);

/** RootUserParamsV4 / V5 (create_sub_organization V7 / V8). */
export const RootUserParams = Type.Object({
  userName: Name("userName"),
  userEmail: Type.Optional(Email),
  userPhoneNumber: Type.Optional(PhoneNumber),
  apiKeys: maxItems(ApiKeyParamsV2, "apiKeys", MAX_KEYS_PER_REQUEST),
  authenticators: Unsupported("authenticators"),
  oauthProviders: Unsupported("oauthProviders"),
});

/** UserParamsV3 / V4 (create_users V3 / V4): root user params plus tags. */
export const UserParams = Type.Object({
  ...RootUserParams.properties,
  userTags: maxItems(Id("user tag"), "userTags", 100),
});
