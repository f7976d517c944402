import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, forbidden, invalidRequest, notFound, perEngine, type Json } from "../helpers/inproc.ts";
import { activitiesOf, enabledOrg, getConfig, subOrgRoot, update } from "../helpers/auth-proxy.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";

const OP = "update_auth_proxy_config";
const TYPE = "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG";

const everything: Json = {
  allowedOrigins: ["https://App.Example.com/", "http://localhost:3000"],
  allowedAuthMethods: ["email", "sms", "passkey"],
  sendFromEmailAddress: "login@example.com",
  replyToEmailAddress: "help@example.com",
  emailAuthTemplateId: "tmpl-1",
  otpTemplateId: "tmpl-2",
  emailCustomizationParams: {
    appName: "Example",
    logoUrl: "https://example.com/logo.png",
    magicLinkTemplate: "https://example.com/m/%s",
    templateVariables: '{"a":"b"}',
  },
  smsCustomizationParams: { template: "Your code is {{.OtpCode}}" },
  walletKitSettings: {
    enabledSocialProviders: ["google", "apple"],
    oauthClientIds: { google: "g-client" },
    oauthRedirectUrl: "https://example.com/oauth",
  },
  otpExpirationSeconds: 300,
  verificationTokenExpirationSeconds: 600,
  sessionExpirationSeconds: 3600,
  otpAlphanumeric: false,
  otpLength: 8,
  sendFromEmailSenderName: "Example Login",
  verificationTokenRequiredForGetAccountPii: true,
  socialLinkingClientIds: ["g-client"],
  captchaEnabled: true,
};

/** The operator allows From / Reply-To in example.com (SIGIL_MAIL_SENDER_DOMAINS), as `everything` uses. */
const SENDER_DOMAINS = { logins: { ...DEFAULT_LOGIN_SETTINGS, mailSenderDomains: ["example.com"] } };

perEngine(
  OP,
  (h) => {
    it("sets every field of v1UpdateAuthProxyConfigIntent; origins are normalized; the result names the config", async () => {
      const { org, config } = await enabledOrg(h(), "update-all");
      const r = completed(await update(h(), org, everything), "updateAuthProxyConfigResult");
      assert.equal(r.configId, config.configId);
      const got = (await getConfig(h(), org)).json.authProxyConfig as Json;
      assert.deepEqual(got.allowedOrigins, ["https://app.example.com", "http://localhost:3000"]);
      for (const k of Object.keys(everything).filter((k) => k !== "allowedOrigins")) assert.deepEqual(got[k], everything[k], k);
    });

    it("changes only the fields it names", async () => {
      const { org } = await enabledOrg(h(), "update-partial");
      completed(
        await update(h(), org, { otpLength: 7, sessionExpirationSeconds: 1200, allowedOrigins: ["https://a.example.com"] }),
        "updateAuthProxyConfigResult",
      );
      completed(await update(h(), org, { otpLength: 9 }), "updateAuthProxyConfigResult");
      const got = (await getConfig(h(), org)).json.authProxyConfig as Json;
      assert.equal(got.otpLength, 9);
      assert.equal(got.sessionExpirationSeconds, 1200);
      assert.deepEqual(got.allowedOrigins, ["https://a.example.com"]);
      assert.equal(got.captchaEnabled, undefined);
      // An empty list, or a single "*": every origin again.
      completed(await update(h(), org, { allowedOrigins: ["*"] }), "updateAuthProxyConfigResult");
      assert.deepEqual((await getConfig(h(), org)).json.authProxyConfig.allowedOrigins, []);
      assert.equal((await getConfig(h(), org)).json.authProxyConfig.otpLength, 9);
    });

    it("before enable_auth_proxy: 404", async () => {
      const org = await h().newOrg("update-none");
      notFound(await update(h(), org, { otpLength: 6 }), /enable it first/);
    });

    it("a sub-organization is refused before validation (403, code 7), nothing recorded", async () => {
      const { org } = await enabledOrg(h(), "update-parent");
      const subRoot = await subOrgRoot(h(), org);
      forbidden(await update(h(), subRoot, { otpLength: 6 }), /only by a top-level organization/);
      forbidden(await update(h(), subRoot, { otpLength: 99 }), /only by a top-level organization/);
      assert.deepEqual(await activitiesOf(h(), subRoot, /AUTH_PROXY/), []);
    });

    it("From and Reply-To outside SIGIL_MAIL_SENDER_DOMAINS are refused when written (400 naming each), changing nothing; the domain in any case is accepted", async () => {
      const { org } = await enabledOrg(h(), "update-sender");
      completed(await update(h(), org, { sendFromEmailAddress: "login@EXAMPLE.com", otpLength: 7 }), "updateAuthProxyConfigResult");
      const refused: [Json, string[]][] = [
        [{ sendFromEmailAddress: "login@evil.example", otpLength: 8 }, ["parameters.sendFromEmailAddress"]],
        [{ replyToEmailAddress: "help@mail.example.com" }, ["parameters.replyToEmailAddress"]],
        [
          { sendFromEmailAddress: "a@other.test", replyToEmailAddress: "b@other.test" },
          ["parameters.sendFromEmailAddress", "parameters.replyToEmailAddress"],
        ],
      ];
      for (const [p, fields] of refused) invalidRequest(await update(h(), org, p), /SIGIL_MAIL_SENDER_DOMAINS/, fields);
      const got = (await getConfig(h(), org)).json.authProxyConfig as Json;
      assert.deepEqual([got.sendFromEmailAddress, got.replyToEmailAddress, got.otpLength], ["login@EXAMPLE.com", undefined, 7]);
    });
  },
  undefined,
  SENDER_DOMAINS,
);

perEngine(
  `${OP} validation`,
  (h) => {
    const refused: [string, Json, string][] = [
      ["otpLength 5", { otpLength: 5 }, "parameters.otpLength"],
      ["otpLength 10", { otpLength: 10 }, "parameters.otpLength"],
      ["a fractional otpLength", { otpLength: 6.5 }, "parameters.otpLength"],
      ["a zero OTP lifetime", { otpExpirationSeconds: 0 }, "parameters.otpExpirationSeconds"],
      ["an OTP lifetime over 600 s", { otpExpirationSeconds: 601 }, "parameters.otpExpirationSeconds"],
      ["a negative token lifetime", { verificationTokenExpirationSeconds: -1 }, "parameters.verificationTokenExpirationSeconds"],
      ["a token lifetime over a day", { verificationTokenExpirationSeconds: 86401 }, "parameters.verificationTokenExpirationSeconds"],
      ["a session over 30 days", { sessionExpirationSeconds: 30 * 86400 + 1 }, "parameters.sessionExpirationSeconds"],
      ["a partial wildcard origin", { allowedOrigins: ["https://*.example.com"] }, "parameters.allowedOrigins[0]"],
      ["a wildcard host", { allowedOrigins: ["https://a.example.com", "*.x"] }, "parameters.allowedOrigins[1]"],
      ['"*" with other origins', { allowedOrigins: ["*", "https://a.example.com"] }, "parameters.allowedOrigins[0]"],
      ["an origin with a path", { allowedOrigins: ["https://a.example.com/app"] }, "parameters.allowedOrigins[0]"],
      ["an origin with a query", { allowedOrigins: ["https://a.example.com?x=1"] }, "parameters.allowedOrigins[0]"],
      ["an origin with user information", { allowedOrigins: ["https://u@a.example.com"] }, "parameters.allowedOrigins[0]"],
      ["a non-http origin", { allowedOrigins: ["ftp://a.example.com"] }, "parameters.allowedOrigins[0]"],
      ["not a URL", { allowedOrigins: ["example.com"] }, "parameters.allowedOrigins[0]"],
      ["101 origins", { allowedOrigins: Array.from({ length: 101 }, (_, i) => `https://o${i}.example.com`) }, "parameters.allowedOrigins"],
      ["a bad from address", { sendFromEmailAddress: "not an email" }, "parameters.sendFromEmailAddress"],
      ["a bad reply-to address", { replyToEmailAddress: "a@b" }, "parameters.replyToEmailAddress"],
      ["a sender name with a line break", { sendFromEmailSenderName: "Evil\r\nBcc: x@example.com" }, "parameters.sendFromEmailSenderName"],
      ["a blank sender name", { sendFromEmailSenderName: "  " }, "parameters.sendFromEmailSenderName"],
      ["a template id with spaces", { otpTemplateId: "a b" }, "parameters.otpTemplateId"],
      ["an SMS template without the code", { smsCustomizationParams: { template: "hello" } }, "parameters.smsCustomizationParams.template"],
      [
        "a magic link without %s",
        { emailCustomizationParams: { magicLinkTemplate: "https://x.example.com/m" } },
        "parameters.emailCustomizationParams.magicLinkTemplate",
      ],
      [
        "template variables that are not an object",
        { emailCustomizationParams: { templateVariables: "[1]" } },
        "parameters.emailCustomizationParams.templateVariables",
      ],
      ["a logo that is not a URL", { emailCustomizationParams: { logoUrl: "logo.png" } }, "parameters.emailCustomizationParams.logoUrl"],
      [
        "an unknown social provider",
        { walletKitSettings: { enabledSocialProviders: ["myspace"] } },
        "parameters.walletKitSettings.enabledSocialProviders[0]",
      ],
      [
        "a client id for an unknown provider",
        { walletKitSettings: { oauthClientIds: { __proto__x: "a" } } },
        "parameters.walletKitSettings.oauthClientIds",
      ],
      [
        "a redirect URL with a fragment",
        { walletKitSettings: { oauthRedirectUrl: "https://x.example.com/cb#frag" } },
        "parameters.walletKitSettings.oauthRedirectUrl",
      ],
      ["a non-boolean captchaEnabled", { captchaEnabled: "yes" }, "parameters.captchaEnabled"],
      ["an empty auth method", { allowedAuthMethods: [""] }, "parameters.allowedAuthMethods[0]"],
      ["an empty social linking client id", { socialLinkingClientIds: [""] }, "parameters.socialLinkingClientIds[0]"],
    ];
    for (const [what, p, field] of refused) {
      it(`refuses ${what} (400, naming ${field}), changing nothing`, async () => {
        const org = (await enabledOrgOnce(h)).org;
        invalidRequest(await h().submit(OP, TYPE, p, { as: org }), undefined, [field]);
        assert.deepEqual((await getConfig(h(), org)).json.authProxyConfig.allowedOrigins, []);
      });
    }
    it("an oauthClientIds key named __proto__ is refused, and reaches no prototype", async () => {
      const org = (await enabledOrgOnce(h)).org;
      const body = '{"walletKitSettings":{"oauthClientIds":{"__proto__":"x"}}}';
      invalidRequest(await h().submit(OP, TYPE, JSON.parse(body) as Json, { as: org }));
      assert.equal(({} as Json).x, undefined);
    });
  },
  ["sqlite"],
  SENDER_DOMAINS,
);

let shared: Promise<{ org: import("../helpers/inproc.ts").Creds }> | undefined;
function enabledOrgOnce(h: () => import("../helpers/inproc.ts").Harness) {
  shared ??= enabledOrg(h(), "update-validation");
  return shared;
}
