// Logins that search downward from the parent's id must not be captured or blocked by what
// another tenant (an end user's own sub-organization) writes on its own, and a verification
// token is no bearer credential (docs/login-lookups.md). Each test is one reported defect, run
// against the real service (child process) on both engines: OTP codes come through a real
// SMTP server, requests go out through the official clients (sdk-server's apiClient,
// @turnkey/http's TurnkeyClient with @turnkey/core's own AttestedStamper for loginWithOtp's
// stamp_login), passkeys are software authenticators (test/helpers/webauthn.ts).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Turnkey } from "@turnkey/sdk-server";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper, SignatureFormat } from "@turnkey/api-key-stamper";
import { encryptOtpCodeToBundle } from "@turnkey/crypto";
import { getClientSignatureMessageForSignup } from "@turnkey/core";
// @turnkey/core's own stamper for X-Stamp-Attested (what loginWithOtp stamps stamp_login with).
import { AttestedStamper, AttestedScheme } from "@turnkey/core/dist/__stampers__/attested/base.js";
import {
  engines,
  newInstance,
  rejection,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { SmtpSink, discoveredKeys } from "../helpers/smtp-sink.ts";
import { SoftPasskey } from "../helpers/webauthn.ts";
import { generateP256, privateScalar, signP256, type P256Private } from "../../src/crypto/p256.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";

const ORIGIN = "http://localhost:3000";
let n = 0;
const address = (who: string) => `${who}-${++n}-${Date.now()}@example.com`;
const claimsOf = (session: string) =>
  JSON.parse(Buffer.from(session.split(".")[1]!, "base64url").toString("utf8")) as { user_id: string; organization_id: string };

for (const spec of engines()) {
  describe(`logins by contact and passkey across tenants [${spec.name}]`, { skip: spec.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let init: InitResult;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let parent: any;

    before(async () => {
      sink = await SmtpSink.start();
      inst = await newInstance(spec.name, {
        SMTP_URL: sink.url,
        SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>",
        SIGIL_WEBAUTHN_RP_ID: "localhost",
        SIGIL_WEBAUTHN_ORIGINS: ORIGIN,
      });
      init = await sigilInit(inst);
      server = await startServer(inst);
      parent = client(init.apiPublicKey, init.apiPrivateKey, init.organizationId);
    });
    after(async () => {
      await server?.stop();
      await sink?.stop();
      await inst?.cleanup();
    });

    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const client = (publicKey: string, privateKey: string, organizationId: string): any =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: publicKey,
        apiPrivateKey: privateKey,
        defaultOrganizationId: organizationId,
      }).apiClient();

    /** An end user signed up by the app with an API key and no contact: the attacker's own account. */
    async function tenant(name: string) {
      const key: P256KeyPair = generateP256KeyPair();
      const sub = await parent.createSubOrganization({
        subOrganizationName: name,
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: name,
            apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
      });
      return {
        orgId: sub.subOrganizationId as string,
        userId: sub.rootUserIds[0] as string,
        key,
        sdk: client(key.publicKey, key.privateKey, sub.subOrganizationId),
      };
    }

    /** init_otp → the code from the SMTP server → verify_otp, in the parent (core's flow through the app): a token bound to a fresh key. */
    async function otpToken(contact: string): Promise<{ token: string; key: P256Private }> {
      const keys = await discoveredKeys(server.url);
      const mark = sink.mark();
      const started = await parent.initOtp({ otpType: "OTP_TYPE_EMAIL", contact, appName: "Sigil E2E" });
      const mail = await sink.nextMail(contact, mark);
      const code = /^([0-9A-Z]{9})\r?$/m.exec(mail.text)![1]!;
      const key = generateP256();
      const encryptedOtpBundle = await encryptOtpCodeToBundle(code, started.otpEncryptionTargetBundle, key.publicCompressed, keys.otp);
      const { verificationToken } = await parent.verifyOtp({ otpId: started.otpId, encryptedOtpBundle });
      return { token: verificationToken, key };
    }

    /** core's loginWithOtp: stamp_login for the token's key, stamped by core's AttestedStamper; organizationId as given. */
    async function loginWithOtp(t: { token: string; key: P256Private }, organizationId: string): Promise<string> {
      const signer = new ApiKeyStamper({ apiPublicKey: t.key.publicCompressed, apiPrivateKey: privateScalar(t.key).toString("hex") });
      const stamper = new AttestedStamper({ sign: (payload: string, format: SignatureFormat) => signer.sign(payload, format) } as never);
      stamper.configure({ attestedIdentity: t.token, publicKey: t.key.publicCompressed, scheme: AttestedScheme.P256_VERIFICATION_TOKEN });
      const res = await new TurnkeyClient({ baseUrl: server.url }, stamper).stampLogin({
        type: "ACTIVITY_TYPE_STAMP_LOGIN",
        timestampMs: String(Date.now()),
        organizationId,
        parameters: { publicKey: t.key.publicCompressed, expirationSeconds: "900", invalidateExisting: false },
      });
      return (res.activity.result as { stampLoginResult: { session: string } }).stampLoginResult.session;
    }

    /** core's signUpWithOtp through the app's backend: create_sub_organization V8 with the token and the key's client signature. */
    async function signUpWithOtp(t: { token: string; key: P256Private }, email: string) {
      const { message, publicKey } = getClientSignatureMessageForSignup({
        verificationToken: t.token,
        email,
        apiKeys: [],
        authenticators: [],
        oauthProviders: [],
      });
      const sub = await parent.createSubOrganization({
        subOrganizationName: email,
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: email, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
        verificationToken: t.token,
        clientSignature: {
          publicKey,
          scheme: "CLIENT_SIGNATURE_SCHEME_API_P256",
          message,
          signature: signP256(t.key, Buffer.from(message, "utf8"), "raw").toString("hex"),
        },
      });
      return { orgId: sub.subOrganizationId as string, userId: sub.rootUserIds[0] as string };
    }

    const apiKeysOf = async (orgId: string, userId: string) =>
      (await parent.getApiKeys({ organizationId: orgId, userId })).apiKeys.length as number;
    const emailOf = async (orgId: string, userId: string) =>
      (await parent.getUser({ organizationId: orgId, userId })).user.userEmail as string | undefined;

    it("defect 2: an email a tenant set on itself without a token does not capture the OTP login of its owner by the parent's id", async () => {
      const bob = address("bob");
      const mallory = await tenant("mallory");
      await mallory.sdk.updateUserEmail({ userId: mallory.userId, userEmail: bob });
      const keysBefore = await apiKeysOf(mallory.orgId, mallory.userId);

      // Bob has no account: his login by the parent's id finds nobody (core then signs him up).
      const first = await otpToken(bob);
      const refused = await rejection(loginWithOtp(first, init.organizationId));
      assert.match(refused.message, /no user with the verified email/);
      assert.equal(await apiKeysOf(mallory.orgId, mallory.userId), keysBefore, "no session key was added to the tenant's user");

      // core's order with one token: sign up, then log in (naming the new sub-organization).
      const mine = await signUpWithOtp(first, bob);
      const session = await loginWithOtp(first, mine.orgId);
      assert.deepEqual([claimsOf(session).user_id, claimsOf(session).organization_id], [mine.userId, mine.orgId]);
      // Later logins by the parent's id reach Bob's own account, never the tenant's.
      const later = await loginWithOtp(await otpToken(bob), init.organizationId);
      assert.deepEqual([claimsOf(later).user_id, claimsOf(later).organization_id], [mine.userId, mine.orgId]);
      assert.equal(await apiKeysOf(mallory.orgId, mallory.userId), keysBefore);
      assert.deepEqual((await parent.getVerifiedSubOrgIds({ filterType: "EMAIL", filterValue: bob })).organizationIds, [mine.orgId]);
    });

    it("defect 3 (OTP): the same unverified email on another tenant causes no CREDENTIAL_CONFLICT for its owner's login", async () => {
      const carol = address("carol");
      // The common flow: the app's backend creates Carol's account with her email; she logs in by OTP with the parent's id.
      const sub = await parent.createSubOrganization({
        subOrganizationName: "carol",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "carol", userEmail: carol, apiKeys: [], authenticators: [], oauthProviders: [] }],
      });
      const mallory = await tenant("mallory-otp");
      await mallory.sdk.updateUserEmail({ userId: mallory.userId, userEmail: carol });
      const session = await loginWithOtp(await otpToken(carol), init.organizationId);
      assert.deepEqual([claimsOf(session).user_id, claimsOf(session).organization_id], [sub.rootUserIds[0], sub.subOrganizationId]);
    });

    it("defect 3 (passkey): another tenant registering the same credential id causes no conflict; the passkey whose key verifies logs in", async () => {
      const dave = new SoftPasskey({ rpId: "localhost", origin: ORIGIN });
      const sub = await parent.createSubOrganization({
        subOrganizationName: "dave",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "dave", apiKeys: [], authenticators: [dave.registration()], oauthProviders: [] }],
      });
      // Mallory registers Dave's credential id with a key of her own (registration takes a challenge of her choosing).
      const mallory = await tenant("mallory-passkey");
      const copy = new SoftPasskey({ rpId: "localhost", origin: ORIGIN });
      (copy as unknown as { credentialId: Buffer }).credentialId = dave.credentialId;
      await mallory.sdk.createAuthenticators({ userId: mallory.userId, authenticators: [copy.registration()] });

      // core's loginWithPasskey: stamp_login with the parent's id, stamped by the passkey (X-Stamp-Webauthn).
      const stampedBy = (p: SoftPasskey) =>
        new TurnkeyClient(
          { baseUrl: server.url },
          { stamp: async (body: string) => ({ stampHeaderName: "X-Stamp-Webauthn", stampHeaderValue: p.stamp(body) }) },
        );
      const login = async (p: SoftPasskey) => {
        const res = await stampedBy(p).stampLogin({
          type: "ACTIVITY_TYPE_STAMP_LOGIN",
          timestampMs: String(Date.now()),
          organizationId: init.organizationId,
          parameters: { publicKey: generateP256KeyPair().publicKey, expirationSeconds: "900", invalidateExisting: false },
        });
        return claimsOf((res.activity.result as { stampLoginResult: { session: string } }).stampLoginResult.session);
      };
      const mine = await login(dave);
      assert.deepEqual([mine.user_id, mine.organization_id], [sub.rootUserIds[0], sub.subOrganizationId]);
      // Mallory's own key reaches only her own account.
      const hers = await login(copy);
      assert.deepEqual([hers.user_id, hers.organization_id], [mallory.userId, mallory.orgId]);
    });

    it("defect 7: another user's verification token, without its key, verifies nothing; list_verified_suborgs names only the owner", async () => {
      const erin = address("erin");
      // Erin signs up and logs in with one token (core's signUpWithOtp).
      const t = await otpToken(erin);
      const mine = await signUpWithOtp(t, erin);
      await loginWithOtp(t, mine.orgId);
      // Mallory got hold of the token (not of its key) and presents it to verify the address on her own user.
      const mallory = await tenant("mallory-token");
      const spent = await rejection(mallory.sdk.updateUserEmail({ userId: mallory.userId, userEmail: erin, verificationToken: t.token }));
      assert.match(spent.message, /verification token/);
      // A token Erin has not used yet is no better without its key.
      const fresh = await otpToken(erin);
      const unbound = await rejection(
        mallory.sdk.updateUserEmail({ userId: mallory.userId, userEmail: erin, verificationToken: fresh.token }),
      );
      assert.match(unbound.message, /must be stamped by the key the verification token is bound to/);
      assert.equal(await emailOf(mallory.orgId, mallory.userId), undefined, "nothing was written");
      assert.deepEqual((await parent.getVerifiedSubOrgIds({ filterType: "EMAIL", filterValue: erin })).organizationIds, [mine.orgId]);
    });
  });
}
