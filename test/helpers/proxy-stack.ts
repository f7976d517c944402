// A running service with its auth proxy for security tests (docs/auth-proxy-service.md):
// `sigil serve` with the proxy in the same process, a real SMTP sink, `sigil init`'s top-level
// organization with the proxy enabled for one app origin, and the three kinds of caller an
// attack involves — the app's backend (the organization's own API key), the browser (anyone,
// through the proxy) and an end user (a sub-organization's own key).
import assert from "node:assert/strict";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { encryptOtpCodeToBundle } from "@turnkey/crypto";
import { getClientSignatureMessageForLogin, getClientSignatureMessageForSignup } from "@turnkey/core";
import { newInstance, sigilInit, startServer, type EngineSpec, type InitResult, type Instance, type RunningServer } from "./server.ts";
import { SmtpSink, codeFrom, discoveredKeys } from "./smtp-sink.ts";
import { generateP256, signP256, type P256Private } from "../../src/crypto/p256.ts";

export const APP_ORIGIN = "https://app.sigil.test";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;
export interface Answer {
  status: number;
  json: Json;
}

let ipCounter = 1;

export interface ProxyStack {
  server: RunningServer;
  sink: SmtpSink;
  init: InitResult;
  configId: string;
  /** A stamped public API call (`submit/…` or `query/…`) with the given key (default: the backend's). */
  api(op: string, body: Json, key?: { publicKey: string; privateKey: string }): Promise<Answer>;
  /** A browser's request to the proxy: the app's Origin, the config id, a client address of its own. */
  proxy(path: string, body: Json, o?: { ip?: string; origin?: string }): Promise<Answer>;
  /** otp_init_v2 → mail → otp_verify_v2 through the proxy: a verification token bound to `key`. */
  verifiedEmail(email: string): Promise<{ token: string; key: P256Private }>;
  /** core's signUpWithOtp through the proxy: signup_v2 with the token, its key's client signature and one session key. */
  signUpWithOtp(t: { token: string; key: P256Private }, email: string): Promise<{ organizationId: string; userId: string }>;
  /** core's completeOtp login through the proxy: otp_login_v2; the session's organization and user. */
  otpLogin(t: { token: string; key: P256Private }): Promise<Answer & { claims?: { organization_id: string; user_id: string } }>;
  stop(): Promise<void>;
}

export async function startProxyStack(spec: EngineSpec, env: NodeJS.ProcessEnv = {}): Promise<ProxyStack> {
  const sink = await SmtpSink.start();
  let inst: Instance | undefined;
  let server: RunningServer | undefined;
  try {
    inst = await newInstance(spec.name, {
      SMTP_URL: sink.url,
      SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>",
      SIGIL_TRUST_PROXY: "1",
      SIGIL_AUTH_PROXY_CONFIG_TTL_MS: "300",
      ...env,
    });
    const init = await sigilInit(inst, ["--name", "Proxy Security Org"]);
    server = await startServer(inst, [], { authProxy: true });
    const running = server;
    const api = async (op: string, body: Json, key = { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }): Promise<Answer> => {
      const text = JSON.stringify(body);
      const stamp = await new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey }).stamp(text);
      const res = await fetch(`${running.url}/public/v1/${op}`, {
        method: "POST",
        body: text,
        headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
      });
      return { status: res.status, json: await res.json() };
    };
    const submit = async (op: string, type: string, parameters: Json) => {
      const r = await api(`submit/${op}`, { type, timestampMs: String(Date.now()), organizationId: init.organizationId, parameters });
      assert.equal(r.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(r.json));
    };
    await submit("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {});
    await submit("update_auth_proxy_config", "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", {
      allowedOrigins: [APP_ORIGIN],
      otpLength: 6,
      otpAlphanumeric: false,
    });
    const got = await api("query/get_auth_proxy_config", { organizationId: init.organizationId });
    const configId = got.json.authProxyConfig.configId as string;

    const proxy = async (path: string, body: Json, o: { ip?: string; origin?: string } = {}): Promise<Answer> => {
      const res = await fetch(`${running.proxyUrl}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: {
          "content-type": "application/json",
          "x-forwarded-for": o.ip ?? `203.0.113.${(ipCounter++ % 250) + 1}`,
          origin: o.origin ?? APP_ORIGIN,
          "x-auth-proxy-config-id": configId,
        },
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    };
    const verifiedEmail = async (email: string) => {
      const key = generateP256();
      const mark = sink.mark();
      const started = await proxy("/v1/otp_init_v2", { otpType: "OTP_TYPE_EMAIL", contact: email });
      assert.equal(started.status, 200, JSON.stringify(started.json));
      const code = codeFrom(await sink.nextMail(email, mark));
      const keys = await discoveredKeys(running.url);
      const encryptedOtpBundle = await encryptOtpCodeToBundle(code, started.json.otpEncryptionTargetBundle, key.publicCompressed, keys.otp);
      const verified = await proxy("/v1/otp_verify_v2", { otpId: started.json.otpId, encryptedOtpBundle });
      assert.equal(verified.status, 200, JSON.stringify(verified.json));
      return { token: verified.json.verificationToken as string, key };
    };
    const signed = (key: P256Private, message: string, publicKey: string) => ({
      publicKey,
      scheme: "CLIENT_SIGNATURE_SCHEME_API_P256",
      message,
      signature: signP256(key, Buffer.from(message, "utf8"), "raw").toString("hex"),
    });
    const signUpWithOtp = async (t: { token: string; key: P256Private }, email: string) => {
      const apiKeys = [{ apiKeyName: "session", publicKey: generateP256().publicCompressed, curveType: "API_KEY_CURVE_P256" as const }];
      const sig = getClientSignatureMessageForSignup({
        verificationToken: t.token,
        email,
        apiKeys,
        authenticators: [],
        oauthProviders: [],
      });
      const up = await proxy("/v1/signup_v2", {
        userEmail: email,
        verificationToken: t.token,
        apiKeys,
        authenticators: [],
        oauthProviders: [],
        clientSignature: signed(t.key, sig.message, sig.publicKey),
      });
      assert.equal(up.status, 200, JSON.stringify(up.json));
      return { organizationId: up.json.organizationId as string, userId: up.json.userId as string };
    };
    const otpLogin = async (t: { token: string; key: P256Private }) => {
      const sessionKey = generateP256();
      const msg = getClientSignatureMessageForLogin({ verificationToken: t.token, sessionPublicKey: sessionKey.publicCompressed });
      const r = await proxy("/v1/otp_login_v2", {
        verificationToken: t.token,
        publicKey: sessionKey.publicCompressed,
        clientSignature: signed(t.key, msg.message, msg.publicKey),
      });
      if (r.status !== 200) return r;
      return { ...r, claims: JSON.parse(Buffer.from(String(r.json.session).split(".")[1]!, "base64url").toString("utf8")) };
    };
    const stack: ProxyStack = {
      server,
      sink,
      init,
      configId,
      api,
      proxy,
      verifiedEmail,
      signUpWithOtp,
      otpLogin,
      async stop() {
        await running.stop();
        await sink.stop();
        await inst?.cleanup();
      },
    };
    return stack;
  } catch (e) {
    await server?.stop();
    await sink.stop();
    await inst?.cleanup();
    throw e;
  }
}
