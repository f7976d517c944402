// The legacy credential-bundle logins end to end (docs/logins.md §9), on both engines: a
// child-process server with SMTP_URL at a real SMTP sink and a real OIDC provider
// (oidc-provider on loopback) as a trusted issuer; a parent organization's backend on
// @turnkey/sdk-server acting for its sub-organizations' users. Every bundle is opened with
// @turnkey/crypto's decryptCredentialBundle and the key inside stamps as the user. Last,
// sdk-server's expressProxyHandler, mounted on a node http server (express is not installed:
// the handler only needs `request.body` and `response.status/send/json`), serves its default
// allow-list, and sdk-server's `sendCredential` server action runs against Sigil unchanged.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { Turnkey } from "@turnkey/sdk-server";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { SmtpSink, codeFrom } from "../helpers/smtp-sink.ts";
import { OidcServer, type Account } from "../helpers/oidc-server.ts";
import { bundleFrom, openBundle, targetKey } from "../helpers/credential-bundles.ts";
import { stampedPost } from "../helpers/raw-http.ts";
import { SoftPasskey } from "../helpers/webauthn.ts";
import { assertSecretsNowhere, type Secret } from "../helpers/secrets-grep.ts";
import { nonceFor } from "../../src/logins/oauth/nonce.ts";
import type { P256KeyPair } from "../../src/crypto/keygen.ts";

const ACCOUNTS: Account[] = ["ada", "bea", "cyd"].map((id) => ({ id: `${id}-${randomBytes(3).toString("hex")}`, username: id, name: id }));
const APP = { appName: "Legacy Demo" };
const require = createRequire(import.meta.url);

type Client = ReturnType<InstanceType<typeof Turnkey>["apiClient"]>;

/** sdk-server's server actions module, loaded afresh: it builds its client from the environment when loaded. */
function serverActions(env: Record<string, string>): { sendCredential: (request: Record<string, unknown>) => Promise<void> } {
  const file = path.join(path.dirname(require.resolve("@turnkey/sdk-server")), "actions.js");
  delete require.cache[file];
  Object.assign(process.env, env);
  return require(file) as { sendCredential: (request: Record<string, unknown>) => Promise<void> };
}

/** expressProxyHandler's (request, response) on a node http server: the body parsed as JSON, the response's express methods mapped. */
async function mountProxy(
  handler: (req: { body: Record<string, unknown> }, res: ProxyResponse) => Promise<void>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        /* the handler answers 400 without methodName */
      }
      const response: ProxyResponse = {
        status(code) {
          res.statusCode = code;
          return response;
        },
        send(text) {
          if (!res.writableEnded) res.end(text);
        },
        json(value) {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(value));
        },
      };
      void handler({ body }, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
interface ProxyResponse {
  status(code: number): ProxyResponse;
  send(text: string): void;
  json(value: unknown): void;
}

for (const spec of engines()) {
  describe(`legacy logins through the SDKs [${spec.name}]`, { skip: spec.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let oidc: OidcServer;
    let init: InitResult;
    let parent: Client;
    let n = 0;
    /** The mailed bundles and every credential's private key: none may be at rest or in the log. */
    const secrets: Secret[] = [];
    const fresh = () => `legacy${++n}-${Date.now()}@example.com`;

    before(async () => {
      sink = await SmtpSink.start();
      oidc = await OidcServer.start([{ clientId: "rp-legacy", clientSecret: `cs-${randomBytes(16).toString("hex")}` }], ACCOUNTS);
      inst = await newInstance(spec.name, { SMTP_URL: sink.url, SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>", LOG_LEVEL: "trace" });
      const providersFile = path.join(inst.dataDir, "oauth-providers.json");
      writeFileSync(providersFile, JSON.stringify({ issuers: [{ issuer: oidc.issuer, jwksUrl: oidc.jwksUrl }] }));
      Object.assign(inst.env, { SIGIL_OAUTH_ALLOW_LOOPBACK: "true", SIGIL_OAUTH_PROVIDERS_FILE: providersFile });
      init = await sigilInit(inst);
      server = await startServer(inst);
      parent = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
    });
    after(async () => {
      await server?.stop();
      await sink?.stop();
      await oidc?.stop();
      await inst?.cleanup();
    });

    /** A sub-organization the backend creates for an end user: the email is vouched (verified). */
    async function endUser(
      email?: string,
      oauthProviders: { providerName: string; oidcToken: string }[] = [],
    ): Promise<{ subId: string; userId: string }> {
      const sub = await parent.createSubOrganization({
        subOrganizationName: `legacy-${randomBytes(4).toString("hex")}`,
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "end user", ...(email ? { userEmail: email } : {}), apiKeys: [], authenticators: [], oauthProviders }],
      });
      return { subId: sub.subOrganizationId, userId: sub.rootUserIds![0]! };
    }
    /** The client holding `credential`, acting in `subId`. */
    const as = (credential: P256KeyPair, subId: string) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: credential.publicKey,
        apiPrivateKey: credential.privateKey,
        defaultOrganizationId: subId,
      }).apiClient();
    /** Opens a bundle and keeps the key it held for the secrets check. */
    const open = (bundle: string, target: P256KeyPair, mailed: boolean) => {
      const credential = openBundle(bundle, target);
      secrets.push({ what: "credential private key", needle: credential.privateKey });
      if (mailed) secrets.push({ what: "mailed credential bundle", needle: bundle });
      return credential;
    };

    it("email recovery: initUserEmailRecovery (parent's key) → mail → decrypt → recoverUser adds a passkey; the old version is refused naming V2", async () => {
      const email = fresh();
      const user = await endUser(email);
      const target = targetKey();
      const mark = sink.mark();
      const r = await parent.initUserEmailRecovery({
        organizationId: user.subId,
        email,
        targetPublicKey: target.publicKey,
        emailCustomization: APP,
      });
      assert.equal(r.userId, user.userId);
      const credential = open(bundleFrom(await sink.nextMail(email, mark)), target, true);
      const passkey = new SoftPasskey();
      const recovered = await as(credential, user.subId).recoverUser({
        userId: user.userId,
        authenticator: passkey.registration({ name: "new phone" }) as Parameters<Client["recoverUser"]>[0]["authenticator"],
      });
      assert.equal(recovered.authenticatorId.length, 1);
      const listed = await parent.getAuthenticators({ organizationId: user.subId, userId: user.userId });
      assert.deepEqual(
        listed.authenticators.map((a) => a.authenticatorName),
        ["new phone"],
      );

      const body = JSON.stringify({
        type: "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY",
        timestampMs: String(Date.now()),
        organizationId: user.subId,
        parameters: { email, targetPublicKey: target.publicKey },
      });
      const old = await stampedPost(server.url, "/public/v1/submit/init_user_email_recovery", body, {
        publicKey: init.apiPublicKey,
        privateKey: init.apiPrivateKey,
      });
      assert.equal(old.status, 400, old.text);
      assert.match(old.json.message, /not accepted .* expected ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2/);
    });

    it("email auth: emailAuth → mail → decrypt → the credential stamps whoami as the user; an unverified address gets no mail", async () => {
      const email = fresh();
      const user = await endUser(email);
      const target = targetKey();
      const mark = sink.mark();
      const r = await parent.emailAuth({
        organizationId: user.subId,
        email,
        targetPublicKey: target.publicKey,
        emailCustomization: APP,
        apiKeyName: "magic link",
      });
      assert.equal(r.userId, user.userId);
      const credential = open(bundleFrom(await sink.nextMail(email, mark)), target, true);
      const who = await as(credential, user.subId).getWhoami({ organizationId: user.subId });
      assert.deepEqual([who.userId, who.organizationId], [user.userId, user.subId]);
      const keys = await parent.getApiKeys({ organizationId: user.subId, userId: user.userId });
      assert.deepEqual(
        keys.apiKeys.map((k) => [k.apiKeyId, k.apiKeyName]),
        [[r.apiKeyId, "magic link"]],
      );

      // A sub-organization that wrote an address for itself: not verified, no credential, no mail.
      const squatter = await endUser();
      const victim = fresh();
      await as(credential, user.subId).createUsers({
        organizationId: user.subId,
        users: [{ userName: "planted", userEmail: victim, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      const before = sink.mails.length;
      await assert.rejects(
        parent.emailAuth({ organizationId: user.subId, email: victim, targetPublicKey: targetKey().publicKey, emailCustomization: APP }),
        /no user with the verified email/,
      );
      await assert.rejects(
        parent.emailAuth({ organizationId: squatter.subId, email, targetPublicKey: targetKey().publicKey, emailCustomization: APP }),
        /no user with the verified email/,
      );
      assert.equal(sink.mails.length, before);
    });

    it("oauth: the provider's id_token (nonce over the target key) → credential bundle → whoami; a nonce over another key is refused", async () => {
      const account = ACCOUNTS[0]!.id;
      const user = await endUser(undefined, [
        { providerName: "oidc", oidcToken: await oidc.idToken("rp-legacy", account, nonceFor(targetKey().publicKey)) },
      ]);
      const target = targetKey();
      const r = await parent.oauth({
        organizationId: user.subId,
        oidcToken: await oidc.idToken("rp-legacy", account, nonceFor(target.publicKey)),
        targetPublicKey: target.publicKey,
      });
      assert.equal(r.userId, user.userId);
      const credential = open(r.credentialBundle, target, false);
      const who = await as(credential, user.subId).getWhoami({ organizationId: user.subId });
      assert.equal(who.userId, user.userId);
      const stolen = await oidc.idToken("rp-legacy", account, nonceFor(targetKey().publicKey));
      await assert.rejects(
        parent.oauth({ organizationId: user.subId, oidcToken: stolen, targetPublicKey: target.publicKey }),
        /nonce mismatch/,
      );
    });

    it("OTP auth: initOtpAuth → code by mail → otpAuth → credential bundle → whoami; the code serves once", async () => {
      const email = fresh();
      const user = await endUser(email);
      const mark = sink.mark();
      const { otpId } = await parent.initOtpAuth({
        organizationId: user.subId,
        otpType: "OTP_TYPE_EMAIL",
        contact: email,
        appName: APP.appName,
      });
      const code = codeFrom(await sink.nextMail(email, mark));
      const target = targetKey();
      const r = await parent.otpAuth({ organizationId: user.subId, otpId, otpCode: code, targetPublicKey: target.publicKey });
      assert.equal(r.userId, user.userId);
      const credential = open(r.credentialBundle!, target, false);
      const who = await as(credential, user.subId).getWhoami({ organizationId: user.subId });
      assert.equal(who.userId, user.userId);
      await assert.rejects(
        parent.otpAuth({ organizationId: user.subId, otpId, otpCode: code, targetPublicKey: targetKey().publicKey }),
        /already been verified/,
      );
    });

    it("sdk-server's sendCredential server action (emailAuth V3 for a sub-organization) delivers a working credential", async () => {
      const email = fresh();
      const user = await endUser(email);
      const { sendCredential } = serverActions({
        NEXT_PUBLIC_BASE_URL: server.url,
        NEXT_PUBLIC_ORGANIZATION_ID: init.organizationId,
        TURNKEY_API_PUBLIC_KEY: init.apiPublicKey,
        TURNKEY_API_PRIVATE_KEY: init.apiPrivateKey,
      });
      const target = targetKey();
      const mark = sink.mark();
      await sendCredential({
        email,
        targetPublicKey: target.publicKey,
        suborgID: user.subId,
        emailCustomization: APP,
        sessionLengthSeconds: 600,
      });
      const credential = open(bundleFrom(await sink.nextMail(email, mark)), target, true);
      const who = await as(credential, user.subId).getWhoami({ organizationId: user.subId });
      assert.equal(who.userId, user.userId);
    });

    it("sdk-server's expressProxyHandler serves its default allow-list end to end, and refuses other methods; nextProxyHandler likewise", async () => {
      const sdk = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      });
      const proxy = await mountProxy(
        sdk.expressProxyHandler({}) as (req: { body: Record<string, unknown> }, res: ProxyResponse) => Promise<void>,
      );
      const call = async (methodName: string, params: unknown[]) => {
        const res = await fetch(proxy.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ methodName, params }),
        });
        const text = await res.text();
        return { status: res.status, text, json: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : undefined };
      };
      try {
        // createSubOrganization (V8) for a new end user.
        const email = fresh();
        const created = await call("createSubOrganization", [
          {
            subOrganizationName: `proxy-${randomBytes(4).toString("hex")}`,
            rootQuorumThreshold: 1,
            rootUsers: [{ userName: "proxied", userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
          },
        ]);
        assert.equal(created.status, 200, created.text);
        const subId = created.json.subOrganizationId as string;
        const userId = created.json.rootUserIds[0] as string;

        // emailAuth and initUserEmailRecovery: the credentials arrive by mail and stamp as the user.
        for (const methodName of ["emailAuth", "initUserEmailRecovery"]) {
          const target = targetKey();
          const mark = sink.mark();
          const res = await call(methodName, [
            { organizationId: subId, email, targetPublicKey: target.publicKey, emailCustomization: APP },
          ]);
          assert.equal(res.status, 200, `${methodName}: ${res.text}`);
          assert.equal(res.json.userId, userId);
          const credential = open(bundleFrom(await sink.nextMail(email, mark)), target, true);
          assert.equal((await as(credential, subId).getWhoami({ organizationId: subId })).userId, userId, methodName);
        }

        // oauth, for a user holding the provider's identity.
        const account = ACCOUNTS[1]!.id;
        const oauthUser = await endUser(undefined, [
          { providerName: "oidc", oidcToken: await oidc.idToken("rp-legacy", account, nonceFor(targetKey().publicKey)) },
        ]);
        const target = targetKey();
        const viaOauth = await call("oauth", [
          {
            organizationId: oauthUser.subId,
            oidcToken: await oidc.idToken("rp-legacy", account, nonceFor(target.publicKey)),
            targetPublicKey: target.publicKey,
          },
        ]);
        assert.equal(viaOauth.status, 200, viaOauth.text);
        const oauthCredential = open(viaOauth.json.credentialBundle, target, false);
        assert.equal((await as(oauthCredential, oauthUser.subId).getWhoami({ organizationId: oauthUser.subId })).userId, oauthUser.userId);

        // createReadWriteSession (V2): the backend's own user, its bundle opened the same way.
        const rw = targetKey();
        const session = await call("createReadWriteSession", [{ targetPublicKey: rw.publicKey }]);
        assert.equal(session.status, 200, session.text);
        const rwCredential = open(session.json.credentialBundle, rw, false);
        assert.equal(
          (await as(rwCredential, init.organizationId).getWhoami({ organizationId: init.organizationId })).organizationId,
          init.organizationId,
        );

        // Anything off the list is refused by the handler; a refused activity is the API's error text.
        const refused = await call("createPolicy", [
          { policyName: "p", effect: "EFFECT_ALLOW", condition: "true", consensus: "true", notes: "" },
        ]);
        assert.equal(refused.status, 401);
        assert.match(refused.text, /Unauthorized proxy method/);
        const failed = await call("emailAuth", [
          { organizationId: subId, email: fresh(), targetPublicKey: targetKey().publicKey, emailCustomization: APP },
        ]);
        assert.equal(failed.status, 500);
        assert.match(failed.text, /no user with the verified email/);
      } finally {
        await proxy.close();
      }
      // nextProxyHandler is the same handler for Next.js API routes: its default list serves emailAuth too.
      const next = await mountProxy(
        sdk.nextProxyHandler({}) as (req: { body: Record<string, unknown> }, res: ProxyResponse) => Promise<void>,
      );
      try {
        const email = fresh();
        const user = await endUser(email);
        const target = targetKey();
        const mark = sink.mark();
        const res = await fetch(next.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            methodName: "emailAuth",
            params: [{ organizationId: user.subId, email, targetPublicKey: target.publicKey, emailCustomization: APP }],
          }),
        });
        assert.equal(res.status, 200, await res.clone().text());
        assert.equal(((await res.json()) as { userId: string }).userId, user.userId);
        const credential = open(bundleFrom(await sink.nextMail(email, mark)), target, true);
        assert.equal((await as(credential, user.subId).getWhoami({ organizationId: user.subId })).userId, user.userId);
      } finally {
        await next.close();
      }
    });

    it("no mailed bundle and no credential private key is in the database or the server's log", async () => {
      assert.ok(secrets.length >= 8, `collected ${secrets.length} secrets`);
      await assertSecretsNowhere(spec.name, inst, server.output(), secrets, "api_keys");
    });
  });
}
