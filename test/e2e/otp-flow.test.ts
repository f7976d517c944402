// The OTP login flow end to end, as an sdk-server backend runs it for its users: a child-
// process server configured with SMTP_URL pointing at a real SMTP server, the parent
// organization's API key (from `sigil init`) acting for a sub-organization's user. The code is
// read from the mail the SMTP server received; keys come from the discovery document; every
// token and session is checked with @turnkey/crypto's own verifiers.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Turnkey } from "@turnkey/sdk-server";
import { verifyOtpVerificationToken, verifySessionJwtSignature } from "@turnkey/crypto";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { SmtpSink, discoveredKeys, e2eOtpLogin } from "../helpers/smtp-sink.ts";

const EMAIL = "sub.user@example.com";

for (const spec of engines()) {
  describe(`OTP login flow through the SDKs [${spec.name}]`, { skip: spec.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let init: InitResult;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let parent: any;
    let subId: string;
    let subUserId: string;

    before(async () => {
      sink = await SmtpSink.start();
      inst = await newInstance(spec.name, { SMTP_URL: sink.url, SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>" });
      init = await sigilInit(inst);
      server = await startServer(inst);
      parent = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
      const sub = await parent.createSubOrganization({
        subOrganizationName: "OTP user",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "sub user", userEmail: EMAIL, apiKeys: [], authenticators: [], oauthProviders: [] }],
      });
      subId = sub.subOrganizationId;
      subUserId = sub.rootUserIds[0];
    });
    after(async () => {
      await server?.stop();
      await sink?.stop();
      await inst?.cleanup();
    });

    const asSession = (key: { publicKey: string; privateKey: string }) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: subId,
      }).apiClient();
    const whoamiError = async (key: { publicKey: string; privateKey: string }) => {
      try {
        await asSession(key).getWhoami({ organizationId: subId });
        return undefined;
      } catch (err) {
        return String((err as Error).message);
      }
    };

    it("init (parent key, sub-org) → code by SMTP → verify → token verifies → login → session verifies and stamps; it expires", async () => {
      const keys = await discoveredKeys(server.url);
      const login = await e2eOtpLogin(parent, sink, server.url, subId, EMAIL, { expirationSeconds: "2" });
      const claims = await verifyOtpVerificationToken(login.verificationToken, keys.verification);
      assert.equal(claims.contact, EMAIL);
      assert.equal(claims.organization_id, subId);
      assert.equal(claims.public_key, login.tokenKey.publicCompressed);
      assert.ok(await verifySessionJwtSignature(login.session, keys.session));
      const who = await asSession(login.sessionKey).getWhoami({ organizationId: subId });
      assert.equal(who.userId, subUserId);
      assert.equal(who.organizationId, subId);
      // Expired after 2 s: poll (bounded) until the server says so.
      const deadline = Date.now() + 10_000;
      let err: string | undefined;
      while (Date.now() < deadline && !(err = await whoamiError(login.sessionKey))?.includes("expired api key"))
        await new Promise((r) => setTimeout(r, 200));
      assert.match(err ?? "", /expired api key/);
    });

    it("a login with invalidateExisting revokes the previous session key", async () => {
      const first = await e2eOtpLogin(parent, sink, server.url, subId, EMAIL, { expirationSeconds: "600" });
      assert.equal(await whoamiError(first.sessionKey), undefined);
      const second = await e2eOtpLogin(parent, sink, server.url, subId, EMAIL, { invalidateExisting: true });
      assert.equal(await whoamiError(second.sessionKey), undefined);
      assert.match((await whoamiError(first.sessionKey)) ?? "", /could not find public key in organization or its parent organization/);
    });

    it("as sdk-server's actions do it: OTP initiated and verified in the parent organization, login in the sub-organization", async () => {
      const login = await e2eOtpLogin(parent, sink, server.url, init.organizationId, EMAIL, { organizationId: subId });
      const keys = await discoveredKeys(server.url);
      assert.equal((await verifyOtpVerificationToken(login.verificationToken, keys.verification)).organization_id, init.organizationId);
      const claims = JSON.parse(Buffer.from(login.session.split(".")[1]!, "base64url").toString("utf8"));
      assert.equal(claims.organization_id, subId);
      assert.equal(claims.user_id, subUserId);
      assert.equal(await whoamiError(login.sessionKey), undefined);
    });

    it("core's loginWithOtp: verifyOtp through the SDK, then stamp_login with X-Stamp-Attested and the parent's id; the session stamps", async () => {
      const keys = await discoveredKeys(server.url);
      const { encryptOtpCodeToBundle } = await import("@turnkey/crypto");
      const { ApiKeyStamper, SignatureFormat } = await import("@turnkey/api-key-stamper");
      const { generateP256, privateScalar } = await import("../../src/crypto/p256.ts");
      const mark = sink.mark();
      const started = await parent.initOtp({ organizationId: subId, otpType: "OTP_TYPE_EMAIL", contact: EMAIL, appName: "Sigil E2E" });
      const mail = await sink.nextMail(EMAIL, mark);
      const code = /^([0-9A-Z]{9})\r?$/m.exec(mail.text)![1]!;
      const key = generateP256();
      const encryptedOtpBundle = await encryptOtpCodeToBundle(code, started.otpEncryptionTargetBundle, key.publicCompressed, keys.otp);
      const { verificationToken } = await parent.verifyOtp({ organizationId: subId, otpId: started.otpId, encryptedOtpBundle });
      // What core sends: stamp_login for the token's own key, stamped by it, attested by the token.
      const stampLogin = (timestampMs: string) => {
        const body = JSON.stringify({
          parameters: { publicKey: key.publicCompressed, expirationSeconds: "900", invalidateExisting: false },
          organizationId: init.organizationId,
          timestampMs,
          type: "ACTIVITY_TYPE_STAMP_LOGIN",
        });
        return (async () => {
          const stamper = new ApiKeyStamper({ apiPublicKey: key.publicCompressed, apiPrivateKey: privateScalar(key).toString("hex") });
          const signature = await stamper.sign(body, SignatureFormat.Der);
          const stamp = {
            publicKeyAttestation: verificationToken,
            scheme: "STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN",
            publicKey: key.publicCompressed,
            signature,
          };
          const res = await fetch(`${server.url}/public/v1/submit/stamp_login`, {
            method: "POST",
            body,
            headers: { "content-type": "application/json", "X-Stamp-Attested": Buffer.from(JSON.stringify(stamp)).toString("base64url") },
          });
          return {
            status: res.status,
            json: (await res.json()) as {
              activity?: { organizationId: string; result: { stampLoginResult: { session: string } } };
              message?: string;
            },
          };
        })();
      };
      const res = await stampLogin(String(Date.now()));
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.equal(res.json.activity!.organizationId, subId);
      const session = res.json.activity!.result.stampLoginResult.session;
      assert.ok(await verifySessionJwtSignature(session, keys.session));
      const who = await asSession({ publicKey: key.publicCompressed, privateKey: privateScalar(key).toString("hex") }).getWhoami({
        organizationId: subId,
      });
      assert.equal(who.userId, subUserId);
      // The token logs in once.
      const again = await stampLogin(String(Date.now() + 1));
      assert.equal(again.status, 401);
      assert.match(again.json.message ?? "", /already been used to log in/);
    });

    it("a wrong code through the SDK fails with 'Invalid OTP code'; the token cannot log in twice", async () => {
      const keys = await discoveredKeys(server.url);
      const { encryptOtpCodeToBundle } = await import("@turnkey/crypto");
      const mark = sink.mark();
      const init2 = await parent.initOtp({
        organizationId: subId,
        otpType: "OTP_TYPE_EMAIL",
        contact: EMAIL,
        appName: "Sigil E2E",
        alphanumeric: false,
        otpLength: 6,
      });
      const mail = await sink.nextMail(EMAIL, mark);
      const code = /^([0-9]{6})\r?$/m.exec(mail.text)![1]!;
      const wrongCode = `${(Number(code[0]) + 1) % 10}${code.slice(1)}`;
      const { generateP256 } = await import("../../src/crypto/p256.ts");
      const bundle = await encryptOtpCodeToBundle(wrongCode, init2.otpEncryptionTargetBundle, generateP256().publicCompressed, keys.otp);
      await assert.rejects(parent.verifyOtp({ organizationId: subId, otpId: init2.otpId, encryptedOtpBundle: bundle }), /Invalid OTP code/);
      const login = await e2eOtpLogin(parent, sink, server.url, subId, EMAIL);
      // The same token, signed properly for a fresh session key, a second time.
      const { getClientSignatureMessageForLogin } = await import("@turnkey/core");
      const { signP256 } = await import("../../src/crypto/p256.ts");
      const { generateP256KeyPair } = await import("../../src/crypto/keygen.ts");
      const again = generateP256KeyPair();
      const { message, publicKey } = getClientSignatureMessageForLogin({
        verificationToken: login.verificationToken,
        sessionPublicKey: again.publicKey,
      });
      const signature = signP256(login.tokenKey, Buffer.from(message, "utf8"), "raw").toString("hex");
      await assert.rejects(
        parent.otpLogin({
          organizationId: subId,
          verificationToken: login.verificationToken,
          publicKey: again.publicKey,
          clientSignature: { publicKey, scheme: "CLIENT_SIGNATURE_SCHEME_API_P256", message, signature },
        }),
        /already been used to log in/,
      );
      assert.match((await whoamiError(again)) ?? "", /could not find public key/);
    });
  });
}
