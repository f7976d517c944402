// OAuth 2.0 and OIDC logins (docs/oauth.md): OAuth credentials and oauth2_authenticate (Sigil
// as an issuer), OIDC identities on users (create_oauth_providers) and oauth_login (or an
// attested stamp_login). Its mechanism (providers, tokens, Sigil's issuer) is in this folder;
// the attested-stamp strategy and the list_suborgs query import it from here too.
import { oauthSettingsFrom } from "./configure.ts";
import { defineLoginMethod } from "../define.ts";
import { OAUTH_KNOBS } from "./knobs.ts";

export const oauth = defineLoginMethod({
  name: "oauth",
  doc: "docs/oauth.md §1",
  activities: [
    "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL",
    "ACTIVITY_TYPE_UPDATE_OAUTH2_CREDENTIAL",
    "ACTIVITY_TYPE_DELETE_OAUTH2_CREDENTIAL",
    "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE",
    "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2",
    "ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS",
    "ACTIVITY_TYPE_OAUTH_LOGIN",
    "ACTIVITY_TYPE_OAUTH",
  ],
  // A parent's backend logs its sub-organizations' users in with their OIDC tokens
  // (docs/logins.md §2.4), by the legacy oauth too (docs/logins.md §9.6).
  parentStampable: [{ type: "ACTIVITY_TYPE_OAUTH_LOGIN" }, { type: "ACTIVITY_TYPE_OAUTH" }],
  knobs: OAUTH_KNOBS,
  settings: (config, { port, log }) => {
    if (config.oauthAllowLoopback)
      log.warn(
        { setting: "SIGIL_OAUTH_ALLOW_LOOPBACK" },
        "development setting: OAuth providers and issuers on loopback addresses are allowed (http there)",
      );
    return { oauth: oauthSettingsFrom({ ...config, port }) };
  },
});
