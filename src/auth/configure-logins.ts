// The login settings `sigil serve` runs with, from its configuration.
import type { Config } from "../config.ts";
import type { LoginSettings, Logger } from "./login-settings.ts";
import { otpTransportsFrom } from "./otp/transports/index.ts";

export function loginSettingsFrom(config: Config, log: Logger): LoginSettings {
  return {
    sessionMaxSeconds: config.sessionMaxSeconds,
    webauthn: { ...(config.webauthnRpId ? { rpId: config.webauthnRpId } : {}), origins: config.webauthnOrigins },
    ...otpTransportsFrom(config, log),
  };
}
