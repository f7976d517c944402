// A browser app with no backend, as the auth proxy is meant for: @turnkey/core's TurnkeyClient
// (its browser build, bundled at test time with esbuild) plus @sigil/client, on a page this
// helper serves, driven in headless Chromium (playwright-core) through page.evaluate. The same
// page is reachable from two origins — http://localhost:<port> (the app's) and
// http://127.0.0.1:<port> (another origin, for the disallowed-origin checks). Each tab is its
// own browser context (its own IndexedDB key store, localStorage sessions and CDP virtual
// authenticator), so every flow starts as a fresh visitor.
//
// The Ethereum wallet is a stand-in for a browser extension: an EIP-1193 provider announced
// with EIP-6963 (what core's web wallet manager discovers) whose personal_sign is a viem local
// account's signMessage.
import { addVirtualAuthenticator, launchChromium, servePage } from "./browser.ts";

const PAGE_SCRIPT = `
import { TurnkeyClient, OtpType } from "@turnkey/core";
import { verifyOtpWithProxy } from "@sigil/client";
import { privateKeyToAccount } from "viem/accounts";

let client;
let settings;

// Errors cross page.evaluate as data: core's TurnkeyError keeps the cause chain.
const describe = (err) => {
  const chain = [];
  for (let e = err, i = 0; e && i < 6; e = e.cause, i++) chain.push({ name: e.name, message: String(e.message ?? e), code: e.code });
  return chain;
};
const attempt = async (fn) => {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, error: describe(err) };
  }
};

const WALLET_RDNS = "test.sigil.wallet";
function installWallet(privateKey) {
  const account = privateKeyToAccount(privateKey);
  const provider = {
    async request({ method, params }) {
      switch (method) {
        case "eth_accounts":
        case "eth_requestAccounts":
          return [account.address];
        case "eth_chainId":
          return "0x1";
        case "personal_sign": {
          const [message, address] = params;
          if (String(address).toLowerCase() !== account.address.toLowerCase()) throw Object.assign(new Error("unknown account"), { code: 4100 });
          // As wallets do: 0x-hex is bytes, anything else is UTF-8 text.
          return account.signMessage({ message: /^0x[0-9a-fA-F]*$/.test(message) ? { raw: message } : message });
        }
        default:
          throw Object.assign(new Error("unsupported method " + method), { code: 4200 });
      }
    },
    on() {},
    removeListener() {},
  };
  const info = { uuid: crypto.randomUUID(), name: "Test Wallet", icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E", rdns: WALLET_RDNS };
  const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
  window.addEventListener("eip6963:requestProvider", announce);
  return account.address;
}

window.app = {
  async init(config) {
    settings = config;
    if (config.walletPrivateKey) installWallet(config.walletPrivateKey);
    client = new TurnkeyClient({
      apiBaseUrl: config.apiBaseUrl,
      authProxyUrl: config.authProxyUrl,
      authProxyConfigId: config.authProxyConfigId,
      organizationId: config.organizationId,
      passkeyConfig: { rpId: location.hostname, timeout: 20000 },
      walletConfig: { features: { auth: true, connecting: false }, chains: { ethereum: { native: true } } },
    });
    await client.init();
    return true;
  },
  // (a) passkeys
  passkeySignUp: (name) => attempt(() => client.signUpWithPasskey({ passkeyDisplayName: name })),
  passkeyLogin: () => attempt(() => client.loginWithPasskey()),
  // (b) email OTP
  otpInit: (contact) => attempt(() => client.initOtp({ otpType: OtpType.Email, contact })),
  coreVerifyOtp: (p) => attempt(() => client.verifyOtp({ otpId: p.otpId, otpCode: p.otpCode, otpEncryptionTargetBundle: p.otpEncryptionTargetBundle })),
  otpComplete: (p) =>
    attempt(async () => {
      const publicKey = await client.createApiKeyPair();
      const { verificationToken } = await verifyOtpWithProxy({
        authProxyUrl: settings.authProxyUrl,
        authProxyConfigId: settings.authProxyConfigId,
        apiBaseUrl: settings.apiBaseUrl,
        otpId: p.otpId,
        otpEncryptionTargetBundle: p.otpEncryptionTargetBundle,
        otpCode: p.otpCode,
        publicKey,
      });
      // What core's completeOtp does after its verifyOtp: look the contact up, then sign up or log in.
      const account = await client.httpClient.proxyGetAccount({ filterType: "EMAIL", filterValue: p.contact, verificationToken });
      if (account?.organizationId) {
        const r = await client.loginWithOtp({ verificationToken, organizationId: account.organizationId });
        return { action: "LOGIN", publicKey, ...r };
      }
      const r = await client.signUpWithOtp({ verificationToken, contact: p.contact, otpType: OtpType.Email });
      return { action: "SIGNUP", publicKey, ...r };
    }),
  // (c) OAuth 2.0 through the proxy's oauth2_authenticate
  newKey: () => attempt(() => client.createApiKeyPair()),
  oauth2Authenticate: (p) => attempt(() => client.httpClient.proxyOAuth2Authenticate(p)),
  completeOauth: (p) => attempt(() => client.completeOauth(p)),
  // (d) Ethereum wallet
  walletLogin: () =>
    attempt(async () => {
      const providers = await client.fetchWalletProviders();
      const provider = providers.find((p) => p.info?.rdns === WALLET_RDNS);
      if (!provider) throw new Error("the test wallet was not discovered: " + JSON.stringify(providers.map((p) => p.info)));
      return client.loginOrSignupWithWallet({ walletProvider: provider });
    }),
  // After any login: the session, and session-stamped reads.
  session: () => attempt(() => client.getSession()),
  user: () => attempt(() => client.fetchUser()),
  wallets: () => attempt(async () => (await client.fetchWallets()).map((w) => ({ walletId: w.walletId, walletName: w.walletName, accounts: (w.accounts ?? []).map((a) => a.address) }))),
  createWallet: (name) => attempt(() => client.createWallet({ walletName: name, accounts: ["ADDRESS_FORMAT_ETHEREUM"] })),
  // core's signMessage on an embedded account (found by address in fetchWallets, as an app
  // holds it): sign_raw_payload stamped by the session key; the result is { r, s, v }.
  signMessage: (p) =>
    attempt(async () => {
      const accounts = (await client.fetchWallets()).flatMap((w) => w.accounts ?? []);
      const walletAccount = accounts.find((a) => a.address.toLowerCase() === String(p.address).toLowerCase());
      if (!walletAccount) throw new Error("no wallet account " + p.address + " among " + JSON.stringify(accounts.map((a) => a.address)));
      return client.signMessage({ message: p.message, walletAccount, ...(p.addEthereumPrefix === undefined ? {} : { addEthereumPrefix: p.addEthereumPrefix }) });
    }),
  // A raw call to the proxy, as core makes it (for refusals).
  proxy: (p) =>
    attempt(async () => {
      const res = await fetch(settings.authProxyUrl + p.path, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Auth-Proxy-Config-ID": p.configId ?? settings.authProxyConfigId },
        body: JSON.stringify(p.body ?? {}),
      });
      return { status: res.status, body: await res.text() };
    }),
  logout: () => attempt(() => client.logout()),
};
`;

export type Attempt<T> = { ok: true; value: T } | { ok: false; error: { name: string; message: string; code?: string | number }[] };

export interface CoreConfig {
  apiBaseUrl: string;
  authProxyUrl: string;
  authProxyConfigId: string;
  organizationId: string;
  /** 0x-hex secp256k1 key of the page's stand-in wallet. */
  walletPrivateKey?: string;
}

export interface CoreTab {
  origin: string;
  /** Calls window.app[fn](arg) in the page. */
  call<T = unknown>(fn: string, arg?: unknown): Promise<Attempt<T>>;
  /** The virtual authenticator's credentials (CDP). */
  credentials(): Promise<{ credentialId: string; signCount: number }[]>;
  /** Every request the page sent, by URL (requests refused before sending are not seen). */
  readonly requests: string[];
  /** Console errors and page errors, for failure messages. */
  readonly console: string[];
  close(): Promise<void>;
}

export interface CorePage {
  /** http://localhost:<port>: the app's origin (the passkey RP ID is "localhost"). */
  origin: string;
  /** http://127.0.0.1:<port>: the same page from another origin. */
  otherOrigin: string;
  /** A fresh visitor: new context, virtual authenticator, page loaded from `origin`, core initialised with `config`. */
  open(config: CoreConfig, origin?: string): Promise<CoreTab>;
  close(): Promise<void>;
}

export async function openCorePage(): Promise<CorePage> {
  const server = await servePage(PAGE_SCRIPT, "core app");
  const port = server.port;
  const origin = `http://localhost:${port}`;
  const otherOrigin = `http://127.0.0.1:${port}`;

  const browser = await launchChromium();
  return {
    origin,
    otherOrigin,
    async open(config, from = origin) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const requests: string[] = [];
      const consoleLines: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      page.on("console", (m) => {
        if (m.type() === "error") consoleLines.push(m.text());
      });
      page.on("pageerror", (e) => consoleLines.push(String(e)));
      const cdp = await context.newCDPSession(page);
      const authenticatorId = await addVirtualAuthenticator(cdp);
      await page.goto(`${from}/`);
      await page.waitForFunction(() => "app" in window);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      await page.evaluate((c) => (window as any).app.init(c), config);
      return {
        origin: from,
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        call: (fn, arg) => page.evaluate(([f, a]) => (window as any).app[f as string](a), [fn, arg] as const) as never,
        async credentials() {
          const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
          return credentials.map((c) => ({ credentialId: c.credentialId, signCount: c.signCount }));
        },
        requests,
        console: consoleLines,
        close: () => context.close(),
      };
    },
    async close() {
      await browser.close();
      await server.close();
    },
  };
}
