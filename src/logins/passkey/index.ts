// Passkey login (docs/logins.md §6): WebAuthn registration (create_authenticators,
// recover_user; ./registration.ts) and passkey stamps (./assertion.ts, checked by the
// X-Stamp-Webauthn strategy, auth/webauthn-stamp.ts, on every request), which then sign
// stamp_login.
import { defineKnob, list, str } from "../../config/define.ts";
import { defineLoginMethod } from "../define.ts";

export const passkey = defineLoginMethod({
  name: "passkey",
  doc: "docs/logins.md §6",
  activities: [
    "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
    "ACTIVITY_TYPE_DELETE_AUTHENTICATORS",
    "ACTIVITY_TYPE_RECOVER_USER",
    "ACTIVITY_TYPE_STAMP_LOGIN",
    "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2",
  ],
  // Upstream's legacy email recovery starts the flow that ends in recover_user (docs/logins.md §6.5, §9.4).
  parentStampable: [{ type: "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY", everyVersion: true }],
  knobs: [
    defineKnob({
      env: "SIGIL_WEBAUTHN_RP_ID",
      flag: "--webauthn-rp-id",
      key: "webauthnRpId",
      parse: str,
      default: undefined,
      doc: {
        meaning: "WebAuthn relying party id passkey registrations and assertions must be for (e.g. `example.com`); unset accepts any",
        default: "any",
      },
    }),
    defineKnob({
      env: "SIGIL_WEBAUTHN_ORIGINS",
      flag: "--webauthn-origins",
      key: "webauthnOrigins",
      parse: list,
      default: [],
      doc: {
        meaning: "Comma-separated exact origins accepted in passkey `clientDataJSON` (e.g. `https://app.example.com`); unset accepts any",
        default: "any",
      },
    }),
  ],
  settings: (config) => ({ webauthn: { ...(config.webauthnRpId ? { rpId: config.webauthnRpId } : {}), origins: config.webauthnOrigins } }),
});
