// The auth proxy end to end, from a browser app with no backend (docs/auth-proxy.md §7): headless
// Chromium loads a page (test/helpers/core-page.ts) whose @turnkey/core TurnkeyClient is pointed
// at Sigil's API (apiBaseUrl) and at the auth proxy `sigil serve` runs next to it (authProxyUrl,
// authProxyConfigId). A top-level organization made by `sigil init` enables the proxy with the
// page's origin allowed; then, in the page, with core's own calls:
//   (a) passkey sign-up (CDP virtual authenticator) and login, then session-stamped reads;
//   (b) email OTP sign-up and login, the code read from a real SMTP server, the one verify step
//       through @sigil/client's verifyOtpWithProxy (docs/logins.md §5.4: core pins the hosted
//       signer key — its own verifyOtp is shown failing for exactly that reason);
//   (c) OAuth 2.0 sign-up and login through the proxy's /v1/oauth2_authenticate against a real
//       OAuth 2.0 server on loopback (oidc-provider), then core's completeOauth;
//   (d) Ethereum-wallet sign-up and login (core's loginOrSignupWithWallet; the wallet is a
//       viem local account behind an EIP-1193 provider in the page), then session-stamped reads.
// After every login the session also signs: core's createWallet, then core's signMessage on
// the new Ethereum account (EIP-191 prefixed, and core's unprefixed default), and viem, in
// Node, recovers the account's address from each signature (docs/signing.md).
// The same page from another origin is refused and no mail is sent; a disabled configuration is
// refused; the proxy's forwarded activities are in the organization's activity list, stamped by
// the proxy key.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { writeFileSync } from "node:fs";
import { createHash, randomBytes } from "node:crypto";
import { Turnkey } from "@turnkey/sdk-server";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { encryptOauth2ClientSecret } from "@turnkey/crypto";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getAddress, keccak256, recoverAddress, serializeSignature, stringToBytes, verifyMessage, type Hex } from "viem";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import {
  engines,
  freePort,
  newInstance,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { browserMissing } from "../helpers/browser.ts";
import { openCorePage, type Attempt, type CoreConfig, type CorePage, type CoreTab } from "../helpers/core-page.ts";
import { SmtpSink, codeFrom } from "../helpers/smtp-sink.ts";
import { OidcServer, type Account } from "../helpers/oidc-server.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const nonceOf = (publicKeyHex: string) => createHash("sha256").update(publicKeyHex, "utf8").digest("hex");
const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;
const X_CLIENT = "sigil-x";

/** The value of a successful page call; a failure fails the test with core's error chain. */
function ok<T>(a: Attempt<T>, what: string, tab?: CoreTab): T {
  if (!a.ok) assert.fail(`${what} failed: ${JSON.stringify(a.error)}${tab ? `\nconsole: ${tab.console.join("\n")}` : ""}`);
  return a.value;
}
/** core's error chain of a failed page call, as one string. */
function failure(a: Attempt<unknown>, what: string): string {
  assert.ok(!a.ok, `${what} was expected to fail, got ${JSON.stringify((a as { value?: unknown }).value)}`);
  return a.error.map((e) => `${e.name}: ${e.message}`).join(" <- ");
}
const claimsOf = (jwt: string): Json => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8")) as Json;

/** SIGIL_AUTH_PROXY_CONFIG_TTL_MS of these tests. */
const CONFIG_TTL_MS = 300;

for (const spec of engines()) {
  describe(`auth proxy from a browser app on @turnkey/core [${spec.name}]`, { skip: spec.skip ?? browserMissing() }, () => {
    let page: CorePage;
    let sink: SmtpSink;
    let oidc: OidcServer;
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let parent: any;
    let config: CoreConfig;
    let proxyPublicKey: string;
    const accounts: Account[] = ["xena", "yuri"].map((n) => ({ id: uniq(n), username: `${n}_handle`, name: n }));
    const tabs: CoreTab[] = [];
    const open = async (over: Partial<CoreConfig> = {}, origin?: string) => {
      const tab = await page.open({ ...config, ...over }, origin);
      tabs.push(tab);
      return tab;
    };

    /** A stamped POST to the public API as the root user (activities sdk-server has no method for). */
    const rootCall = async (kind: "submit" | "query", op: string, body: Json): Promise<{ status: number; json: Json }> => {
      const text = JSON.stringify(body);
      const stamp = await new ApiKeyStamper({ apiPublicKey: init.apiPublicKey, apiPrivateKey: init.apiPrivateKey }).stamp(text);
      const res = await fetch(`${server.url}/public/v1/${kind}/${op}`, {
        method: "POST",
        body: text,
        headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
      });
      return { status: res.status, json: (await res.json()) as Json };
    };
    const activity = async (op: string, type: string, parameters: Json) => {
      const r = await rootCall("submit", op, { type, timestampMs: String(Date.now()), organizationId: init.organizationId, parameters });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.activity.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(r.json));
      return r.json.activity as Json;
    };
    const activities = async (): Promise<Json[]> =>
      (await parent.getActivities({ organizationId: init.organizationId, paginationOptions: { limit: "100" } })).activities as Json[];

    before(async () => {
      page = await openCorePage();
      sink = await SmtpSink.start();
      oidc = await OidcServer.start([{ clientId: X_CLIENT, clientSecret: `cs-${randomBytes(16).toString("hex")}` }], accounts);
      const port = await freePort();
      inst = await newInstance(spec.name, {
        SMTP_URL: sink.url,
        SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>",
        SIGIL_WEBAUTHN_RP_ID: "localhost",
        SIGIL_WEBAUTHN_ORIGINS: page.origin,
        // No SIGIL_CORS_ORIGINS: the page calls the API itself (logins, session-stamped reads),
        // admitted because the enabled proxy configuration lists its origin (docs/auth-proxy.md §5).
        SIGIL_PUBLIC_URL: `http://127.0.0.1:${port}`,
        SIGIL_OAUTH_ALLOW_LOOPBACK: "true",
        // A short proxy config TTL: the disabled config below reaches the proxy within it.
        SIGIL_AUTH_PROXY_CONFIG_TTL_MS: String(CONFIG_TTL_MS),
      });
      const providersFile = path.join(inst.dataDir, "oauth-providers.json");
      writeFileSync(
        providersFile,
        JSON.stringify({
          providers: { OAUTH2_PROVIDER_X: { tokenUrl: oidc.tokenUrl, userInfoUrl: `${oidc.issuer}/2/users/me` } },
          issuers: [],
        }),
      );
      inst.env.SIGIL_OAUTH_PROVIDERS_FILE = providersFile;
      init = await sigilInit(inst, ["--name", "Browser App Org"]);
      server = await startServer(inst, [], { port, authProxy: true });
      assert.ok(server.proxyUrl, "sigil serve started the auth proxy");
      parent = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();

      // The organization turns the proxy on and allows the app's origin.
      await activity("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {});
      await activity("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", {
        allowedOrigins: [page.origin],
        sessionExpirationSeconds: 1800,
        otpLength: 6,
        otpAlphanumeric: false,
      });
      const got = await rootCall("query", "get_auth_proxy_config", { organizationId: init.organizationId });
      assert.equal(got.status, 200, JSON.stringify(got.json));
      const cfg = got.json.authProxyConfig as Json;
      proxyPublicKey = cfg.publicKey as string;
      assert.deepEqual(cfg.allowedOrigins, [page.origin]);

      // The X credential oauth2_authenticate exchanges codes with (its secret encrypted to the published key).
      const keys = (await (await fetch(`${server.url}/public/v1/discovery/keys`)).json()) as {
        keys: { purpose: string; publicKey: string; status: string }[];
      };
      const secretKey = keys.keys.find((k) => k.purpose === "OAUTH2_CLIENT_SECRET" && k.status === "active")!.publicKey;
      await parent.createOauth2Credential({
        provider: "OAUTH2_PROVIDER_X",
        clientId: X_CLIENT,
        encryptedClientSecret: await encryptOauth2ClientSecret(oidc.clients.get(X_CLIENT)!.clientSecret, secretKey),
      });

      config = {
        apiBaseUrl: server.url,
        authProxyUrl: server.proxyUrl!,
        authProxyConfigId: cfg.configId as string,
        organizationId: init.organizationId,
      };
    });
    after(async () => {
      for (const t of tabs) await t.close().catch(() => undefined);
      await page?.close();
      await server?.stop();
      await oidc?.stop();
      await sink?.stop();
      await inst?.cleanup();
    });

    /** The session core stored, with its JWT's claims; and the session-stamped reads work. */
    const sessionOf = async (tab: CoreTab): Promise<Json> => {
      const s = ok(await tab.call<Json>("session"), "getSession", tab);
      assert.ok(s?.token, `a stored session: ${JSON.stringify(s)}`);
      return { ...s, claims: claimsOf(s.token as string) };
    };
    const readsWithSession = async (tab: CoreTab, subOrganizationId: string, userId: string) => {
      const user = ok(await tab.call<Json>("user"), "fetchUser", tab);
      assert.equal(user.userId, userId);
      const walletName = uniq("wallet");
      ok(await tab.call("createWallet", walletName), "createWallet", tab);
      const wallets = ok(await tab.call<Json[]>("wallets"), "fetchWallets", tab);
      const made = wallets.find((w) => w.walletName === walletName);
      assert.ok(made, `the new wallet is listed: ${JSON.stringify(wallets)}`);
      assert.match(made.accounts[0], /^0x[0-9a-fA-F]{40}$/);
      const { wallets: seenByParent } = await parent.getWallets({ organizationId: subOrganizationId });
      assert.ok(seenByParent.some((w: Json) => w.walletName === walletName));
      await signsWithSession(tab, subOrganizationId, made.accounts[0] as Hex);
    };

    /** core's signMessage with the session on `address`: signatures viem recovers to that address. */
    const signsWithSession = async (tab: CoreTab, subOrganizationId: string, address: Hex) => {
      const signature = (sig: Json) => {
        assert.match(`${sig.r}${sig.s}`, /^[0-9a-f]{128}$/i, JSON.stringify(sig));
        assert.match(sig.v as string, /^0[01]$/, JSON.stringify(sig));
        return { r: `0x${sig.r}` as Hex, s: `0x${sig.s}` as Hex, yParity: Number(sig.v) };
      };
      const message = `${uniq("sign in to the app")} — ünïcode too`;
      const prefixed = ok(await tab.call<Json>("signMessage", { address, message, addEthereumPrefix: true }), "signMessage (EIP-191)", tab);
      assert.ok(
        await verifyMessage({ address, message, signature: serializeSignature(signature(prefixed)) }),
        "viem verifies the EIP-191 signature",
      );
      // core's default for an embedded account: no prefix, keccak256 of the UTF-8 bytes.
      const plain = ok(await tab.call<Json>("signMessage", { address, message }), "signMessage (unprefixed)", tab);
      assert.equal(await recoverAddress({ hash: keccak256(stringToBytes(message)), signature: signature(plain) }), getAddress(address));
      // Both were sign_raw_payload activities in the user's sub-organization, stamped by the session key.
      const s = await sessionOf(tab);
      const signed = ((await parent.getActivities({ organizationId: subOrganizationId })).activities as Json[]).filter(
        (a) => a.type === "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2",
      );
      assert.equal(signed.length, 2, `two signing activities: ${JSON.stringify(signed.map((a) => a.status))}`);
      for (const a of signed) {
        assert.equal(a.status, "ACTIVITY_STATUS_COMPLETED");
        assert.equal(a.votes[0].publicKey, s.claims.public_key);
      }
    };

    it("(a) passkey: sign-up through the proxy, login, session-stamped reads", async () => {
      const tab = await open();
      const name = uniq("pk");
      const signed = ok(await tab.call<Json>("passkeySignUp", name), "signUpWithPasskey", tab);
      const first = claimsOf(signed.sessionToken as string);
      const subOrganizationId = first.organization_id as string;
      assert.notEqual(subOrganizationId, init.organizationId);
      const { user } = await parent.getUser({ organizationId: subOrganizationId, userId: first.user_id });
      assert.equal(user.authenticators.length, 1);
      assert.equal(user.authenticators[0].credentialId, signed.credentialId);
      ok(await tab.call("logout"), "logout", tab);

      const logged = ok(await tab.call<Json>("passkeyLogin"), "loginWithPasskey", tab);
      assert.equal(logged.credentialId, signed.credentialId);
      const s = await sessionOf(tab);
      assert.deepEqual([s.claims.organization_id, s.claims.user_id], [subOrganizationId, first.user_id]);
      await readsWithSession(tab, subOrganizationId, first.user_id as string);
    });

    it("(b) email OTP: core's verifyOtp refuses the bundle (pinned signer); @sigil/client's verifyOtpWithProxy, then core signs up and logs in", async () => {
      const email = `${uniq("otp")}@example.com`;
      const tab = await open();
      let mark = sink.mark();
      const started = ok(await tab.call<Json>("otpInit", email), "initOtp", tab);
      const code = codeFrom(await sink.nextMail(email, mark));
      assert.match(code, /^[0-9]{6}$/, "otpLength 6, digits only, from the proxy configuration");

      // Core unchanged: @turnkey/crypto's encryptOtpCodeToBundle checks the bundle against the
      // hosted signer key (no override) and throws before anything is sent.
      const coreTry = failure(
        await tab.call("coreVerifyOtp", {
          otpId: started.otpId,
          otpCode: code,
          otpEncryptionTargetBundle: started.otpEncryptionTargetBundle,
        }),
        "core's verifyOtp",
      );
      assert.match(coreTry, /Failed to verify OTP/);
      assert.match(coreTry, /expected signer key 04[0-9a-f]{128} does not match signer key from bundle: 04[0-9a-f]{128}/);

      const signedUp = ok(await tab.call<Json>("otpComplete", { ...started, otpCode: code, contact: email }), "OTP sign-up", tab);
      assert.equal(signedUp.action, "SIGNUP");
      const s1 = await sessionOf(tab);
      assert.notEqual(s1.claims.organization_id, init.organizationId);
      assert.equal(s1.claims.public_key, signedUp.publicKey);
      const { user } = await parent.getUser({ organizationId: s1.claims.organization_id, userId: s1.claims.user_id });
      assert.equal(user.userEmail, email);

      // A second visit: login.
      const again = await open();
      mark = sink.mark();
      const second = ok(await again.call<Json>("otpInit", email), "initOtp (login)", again);
      const code2 = codeFrom(await sink.nextMail(email, mark));
      const loggedIn = ok(await again.call<Json>("otpComplete", { ...second, otpCode: code2, contact: email }), "OTP login", again);
      assert.equal(loggedIn.action, "LOGIN");
      const s2 = await sessionOf(again);
      assert.deepEqual([s2.claims.organization_id, s2.claims.user_id], [s1.claims.organization_id, s1.claims.user_id]);
      await readsWithSession(again, s1.claims.organization_id as string, s1.claims.user_id as string);

      // A wrong code: the SDK's message.
      mark = sink.mark();
      const third = ok(await again.call<Json>("otpInit", email), "initOtp (wrong code)", again);
      await sink.nextMail(email, mark);
      const wrong = failure(
        await again.call("otpComplete", { ...third, otpCode: "000000" === code2 ? "111111" : "000000", contact: email }),
        "a wrong code",
      );
      assert.match(wrong, /Invalid OTP code/);
    });

    it("(c) OAuth 2.0: /v1/oauth2_authenticate against a real provider, then core's completeOauth signs up, and logs in next time", async () => {
      const run = async (tab: CoreTab, account: Account) => {
        const publicKey = ok(await tab.call<string>("newKey"), "createApiKeyPair", tab);
        const a = await oidc.authorize({ clientId: X_CLIENT, accountId: account.id });
        const { oidcToken } = ok(
          await tab.call<Json>("oauth2Authenticate", {
            provider: "OAUTH2_PROVIDER_X",
            clientId: X_CLIENT,
            authCode: a.code,
            redirectUri: a.redirectUri,
            codeVerifier: a.codeVerifier,
            nonce: nonceOf(publicKey),
          }),
          "proxyOAuth2Authenticate",
          tab,
        );
        assert.equal(claimsOf(oidcToken as string).nonce, nonceOf(publicKey));
        return {
          oidcToken: oidcToken as string,
          result: ok(await tab.call<Json>("completeOauth", { oidcToken, publicKey, providerName: "X" }), "completeOauth", tab),
        };
      };
      const tab = await open();
      const first = await run(tab, accounts[0]!);
      assert.equal(first.result.action, "SIGNUP");
      const s1 = await sessionOf(tab);
      assert.notEqual(s1.claims.organization_id, init.organizationId);
      const { oauthProviders } = await parent.getOauthProviders({ organizationId: s1.claims.organization_id, userId: s1.claims.user_id });
      const token = claimsOf(first.oidcToken);
      assert.deepEqual(
        oauthProviders.map((p: Json) => [p.issuer, p.subject, p.audience]),
        [[token.iss, token.sub, X_CLIENT]],
      );

      const again = await open();
      const second = await run(again, accounts[0]!);
      assert.equal(second.result.action, "LOGIN");
      const s2 = await sessionOf(again);
      assert.deepEqual([s2.claims.organization_id, s2.claims.user_id], [s1.claims.organization_id, s1.claims.user_id]);
      await readsWithSession(again, s1.claims.organization_id as string, s1.claims.user_id as string);
    });

    it("(d) Ethereum wallet: core's loginOrSignupWithWallet signs up (wallet key, secp256k1) and logs in with EIP-191 stamps", async () => {
      const walletPrivateKey = generatePrivateKey();
      const walletPublicKey = Buffer.from(secp256k1.getPublicKey(Buffer.from(walletPrivateKey.slice(2), "hex"), true)).toString("hex");
      const address = privateKeyToAccount(walletPrivateKey).address;
      const tab = await open({ walletPrivateKey });
      const first = ok(await tab.call<Json>("walletLogin"), "loginOrSignupWithWallet (sign-up)", tab);
      assert.equal(first.action, "SIGNUP");
      assert.equal(String(first.address).toLowerCase(), address.toLowerCase());
      const s1 = await sessionOf(tab);
      const { user } = await parent.getUser({ organizationId: s1.claims.organization_id, userId: s1.claims.user_id });
      const walletKey = (user.apiKeys as Json[]).find((k) => k.credential.publicKey === walletPublicKey);
      assert.ok(walletKey, `the wallet's key is the user's API key: ${JSON.stringify(user.apiKeys)}`);
      assert.equal(walletKey.credential.type, "CREDENTIAL_TYPE_API_KEY_SECP256K1");

      const again = await open({ walletPrivateKey });
      const second = ok(await again.call<Json>("walletLogin"), "loginOrSignupWithWallet (login)", again);
      assert.equal(second.action, "LOGIN");
      const s2 = await sessionOf(again);
      assert.deepEqual([s2.claims.organization_id, s2.claims.user_id], [s1.claims.organization_id, s1.claims.user_id]);
      await readsWithSession(again, s1.claims.organization_id as string, s1.claims.user_id as string);
      // Both logins were stamp_login stamped by the wallet itself (EIP-191), not by the proxy.
      const logins = ((await parent.getActivities({ organizationId: s1.claims.organization_id })).activities as Json[]).filter(
        (a) => a.type === "ACTIVITY_TYPE_STAMP_LOGIN",
      );
      assert.equal(logins.length, 2);
      for (const a of logins)
        assert.deepEqual([a.votes[0].publicKey, a.votes[0].scheme], [walletPublicKey, "SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191"]);
    });

    it("the proxy's forwarded activities are in the organization's list, stamped by the proxy key", async () => {
      const list = await activities();
      const byProxy = list.filter((a) => (a.votes as Json[]).some((v) => v.publicKey === proxyPublicKey));
      const types = new Set(byProxy.map((a) => a.type as string));
      for (const t of [
        "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
        "ACTIVITY_TYPE_INIT_OTP_V3",
        "ACTIVITY_TYPE_VERIFY_OTP_V2",
        "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE",
      ]) {
        assert.ok(types.has(t), `${t} stamped by the proxy key in ${JSON.stringify([...types])}`);
      }
      for (const a of byProxy) assert.equal((a.votes as Json[])[0]!.scheme, "SIGNATURE_SCHEME_TK_API_P256");
    });

    it("the same page from a disallowed origin is refused, and no mail is sent", async () => {
      const email = `${uniq("elsewhere")}@example.com`;
      const tab = await open({}, page.otherOrigin);
      const refused = failure(await tab.call("otpInit", email), "initOtp from a disallowed origin");
      assert.match(refused, /Failed to initialize OTP/);
      // Nothing reached the API: no init_otp for the address. (The mail check below is final:
      // the allowed-origin init after it is delivered first-come, and nothing to this address.)
      assert.ok(!(await activities()).some((a) => JSON.stringify(a.intent).includes(email)));
      const control = `${uniq("control")}@example.com`;
      const allowed = await open();
      const mark = sink.mark();
      ok(await allowed.call("otpInit", control), "initOtp from the allowed origin", allowed);
      await sink.nextMail(control, mark);
      assert.deepEqual(sink.mailTo(email), []);
    });

    it("a disabled configuration is refused: forwarded calls at once (the API refuses the proxy key), the rest once the proxy's cached config expires", async () => {
      await activity("disable_auth_proxy", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY", {});
      const email = `${uniq("disabled")}@example.com`;
      const tab = await open();
      const refused = failure(await tab.call("otpInit", email), "initOtp with the configuration disabled");
      assert.match(refused, /Failed to initialize OTP/);
      // The answers themselves, from node (a browser may see only a failed preflight once the
      // proxy's origin list no longer has the disabled config's origins).
      const rawCall = async (p: string, body: Json) => {
        const res = await fetch(`${config.authProxyUrl}${p}`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: page.origin, "x-auth-proxy-config-id": config.authProxyConfigId },
          body: JSON.stringify(body),
        });
        return { status: res.status, json: (await res.json()) as Json };
      };
      const raw = await rawCall("/v1/otp_init_v2", { otpType: "OTP_TYPE_EMAIL", contact: email });
      assert.ok(raw.status >= 400 && raw.status < 500, `disabled config: ${raw.status} ${JSON.stringify(raw.json)}`);
      assert.match(raw.json.message as string, /disabled/);
      // Answers the proxy makes from its own copy of the config follow within its TTL
      // (docs/auth-proxy-service.md §2): polled, with a deadline, not slept through.
      const deadline = Date.now() + CONFIG_TTL_MS + 5_000;
      let last: { status: number; json: Json };
      do {
        last = await rawCall("/v1/wallet_kit_config", {});
        if (last.status !== 200) break;
        await new Promise((r) => setTimeout(r, 200));
      } while (Date.now() < deadline);
      assert.equal(last.status, 403, `wallet_kit_config once the cached config expired: ${JSON.stringify(last)}`);
      assert.match(last.json.message as string, /disabled/);
      assert.deepEqual(sink.mailTo(email), []);
    });
  });
}
