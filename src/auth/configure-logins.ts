// The login settings `sigil serve` runs with, from its configuration.
import type { Config } from "../config.ts";
import type { LoginSettings, Logger } from "./login-settings.ts";
import { otpTransportsFrom } from "./otp/transports/index.ts";
import { oauthSettingsFrom } from "./oauth/configure.ts";

export function loginSettingsFrom(config: Config, log: Logger): LoginSettings {
  if (config.oauthAllowLoopback) log.warn({ setting: "SIGIL_OAUTH_ALLOW_LOOPBACK" }, "development setting: OAuth providers and issuers on loopback addresses are allowed (http there)");
  return {
    sessionMaxSeconds: config.sessionMaxSeconds,
    webauthn: { ...(config.webauthnRpId ? { rpId: config.webauthnRpId } : {}), origins: config.webauthnOrigins },
    ...otpTransportsFrom(config, log),
    oauth: oauthSettingsFrom(config),
    otpLimits: {
      guessesPerContact: config.otpGuessesPerContact,
      guessWindowSeconds: config.otpGuessWindowSeconds,
      initiationsPerContactPerHour: config.otpInitiationsPerContactPerHour,
      sendsPerRecipientPerHour: config.otpSendsPerRecipientPerHour,
      sendsPerOrganizationPerHour: config.otpSendsPerOrganizationPerHour,
    },
    ...(config.mailSenderDomains !== undefined ? { mailSenderDomains: config.mailSenderDomains } : {}),
  };
}
