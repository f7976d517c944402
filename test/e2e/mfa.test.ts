// MFA end to end (docs/mfa.md), with the official clients against a child-process server on
// each engine: a sub-organization's user logs in by email OTP (sdk-server's initOtp /
// verifyOtp / otpLogin, the code read from a real SMTP server), creates an MFA policy that
// holds create_policy until a passkey has stamped it after the session, and then creates a
// policy through @turnkey/core's client: the activity comes back
// ACTIVITY_STATUS_AUTHENTICATORS_NEEDED, core fetches get_mfa_status and calls onMfaRequired,
// whose approve_activity is stamped by the passkey, and core's poll finds it COMPLETED.
// The passkey is a software authenticator in node (real ES256 assertions,
// test/helpers/webauthn.ts) and, once more, the headless browser's virtual authenticator.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Turnkey } from "@turnkey/sdk-server";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { TurnkeySDKClientBase } from "@turnkey/core/dist/__generated__/sdk-client-base.js";
import { StamperType, type MfaContext } from "@turnkey/core";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { SmtpSink, e2eOtpLogin } from "../helpers/smtp-sink.ts";
import { SoftPasskey } from "../helpers/webauthn.ts";
import { browserMissing, openPasskeyPage, type PasskeyPage } from "../helpers/browser.ts";

const EMAIL = "mfa.user@example.com";
const SOFT_ORIGIN = "http://localhost:3000";
const HOLD_POLICIES = "activity.resource == 'POLICY' && activity.action == 'CREATE'";
const NEEDED = "ACTIVITY_STATUS_AUTHENTICATORS_NEEDED";

type Stamp = { stampHeaderName: string; stampHeaderValue: string };
type Keys = { publicKey: string; privateKey: string };

for (const spec of engines()) {
  describe(`MFA: create_policy waits for a passkey after an OTP session [${spec.name}]`, { skip: spec.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let init: InitResult;
    let page: PasskeyPage | undefined;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let parent: any;
    let subId: string;
    let userId: string;
    let session: Keys;
    const soft = new SoftPasskey({ origin: SOFT_ORIGIN });
    const browser = browserMissing();

    /** core's client as an app configures it: the session key stamps by default, the passkey on request. */
    const coreClient = (passkey: (payload: string) => Promise<Stamp>, onMfaRequired?: (ctx: MfaContext) => Promise<void>) =>
      new TurnkeySDKClientBase({
        apiBaseUrl: server.url,
        organizationId: subId,
        apiKeyStamper: new ApiKeyStamper({ apiPublicKey: session.publicKey, apiPrivateKey: session.privateKey }),
        passkeyStamper: { stamp: passkey },
        activityPoller: { intervalMs: 50, numRetries: 5 },
        ...(onMfaRequired ? { onMfaRequired } : {}),
      });
    const softStamp = async (payload: string): Promise<Stamp> => ({
      stampHeaderName: "X-Stamp-Webauthn",
      stampHeaderValue: soft.stamp(payload),
    });
    const policyParams = (name: string) => ({
      policyName: name,
      effect: "EFFECT_ALLOW" as const,
      condition: "activity.resource == 'WALLET'",
      consensus: "true",
      notes: "",
    });

    before(async () => {
      if (!browser) page = await openPasskeyPage();
      sink = await SmtpSink.start();
      const origins = [SOFT_ORIGIN, ...(page ? [page.origin] : [])].join(",");
      inst = await newInstance(spec.name, {
        SMTP_URL: sink.url,
        SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>",
        SIGIL_WEBAUTHN_RP_ID: "localhost",
        SIGIL_WEBAUTHN_ORIGINS: origins,
      });
      init = await sigilInit(inst);
      server = await startServer(inst);
      parent = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: init.apiPublicKey,
        apiPrivateKey: init.apiPrivateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
      const authenticators = [{ ...soft.registration({ name: "node passkey" }) }];
      if (page) {
        const { encodedChallenge, attestation } = await page.createPasskey("mfa user");
        authenticators.push({ authenticatorName: "browser passkey", challenge: encodedChallenge, attestation });
      }
      const sub = await parent.createSubOrganization({
        subOrganizationName: "MFA user",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "mfa user", userEmail: EMAIL, apiKeys: [], authenticators, oauthProviders: [] }],
      });
      subId = sub.subOrganizationId;
      userId = sub.rootUserIds[0];
      // The OTP login: its session key is what the app stamps with.
      session = (await e2eOtpLogin(parent, sink, server.url, subId, EMAIL)).sessionKey;
      // The user sets the MFA policy with that session (nothing holds it yet).
      const created = await coreClient(softStamp).createMfaPolicy({
        userId,
        mfaPolicyName: "passkey after session for new policies",
        condition: HOLD_POLICIES,
        requiredAuthenticationMethods: [
          { any: [{ type: "AUTHENTICATION_TYPE_SESSION" }] },
          { any: [{ type: "AUTHENTICATION_TYPE_PASSKEY" }] },
        ],
        order: 0,
      });
      assert.equal(created.activity.status, "ACTIVITY_STATUS_COMPLETED");
    });
    after(async () => {
      await page?.close();
      await server?.stop();
      await sink?.stop();
      await inst?.cleanup();
    });

    it("core's onMfaRequired: the session's create_policy waits, the node passkey's approval completes it", async () => {
      const seen: MfaContext[] = [];
      const client = coreClient(softStamp, async (ctx) => {
        seen.push(ctx);
        const answer = await client.approveActivity(
          { fingerprint: ctx.fingerprint, organizationId: ctx.organizationId },
          StamperType.Passkey,
        );
        assert.equal(answer.activity.status, "ACTIVITY_STATUS_COMPLETED");
      });
      const res = await client.createPolicy(policyParams("held by MFA"));
      assert.equal(res.activity.status, "ACTIVITY_STATUS_COMPLETED");
      assert.ok(res.policyId, "core flattened the result after the poll");
      assert.equal(seen.length, 1);
      const [ctx] = seen;
      assert.equal(ctx!.activityStatus, NEEDED);
      assert.equal(ctx!.activityType, "ACTIVITY_TYPE_CREATE_POLICY_V3");
      assert.equal(ctx!.mfaStatuses.length, 1);
      assert.equal(ctx!.mfaStatuses[0]!.userId, userId);
      assert.equal(ctx!.mfaStatuses[0]!.satisfied, false);
      assert.deepEqual(
        ctx!.mfaStatuses[0]!.satisfiedMethods.map((m) => m.type),
        ["AUTHENTICATION_TYPE_SESSION"],
      );
      assert.deepEqual(
        ctx!.mfaStatuses[0]!.requiredMethods.map((r) => r.any.map((m) => m.type)),
        [["AUTHENTICATION_TYPE_SESSION"], ["AUTHENTICATION_TYPE_PASSKEY"]],
      );
      const { policy } = await parent.getPolicy({ organizationId: subId, policyId: res.policyId });
      assert.equal(policy.policyName, "held by MFA");
      // The record: the session's vote, then the passkey's; why it waited, then why it ran.
      const { activity } = await parent.getActivity({ organizationId: subId, activityId: ctx!.activityId });
      assert.deepEqual(
        activity.votes.map((v: { scheme: string }) => v.scheme),
        ["SIGNATURE_SCHEME_TK_API_P256", activity.votes[1].scheme],
      );
      assert.notEqual(activity.votes[1].scheme, "SIGNATURE_SCHEME_TK_API_P256");
      const { policyEvaluations } = await parent.getPolicyEvaluations({ organizationId: subId, activityId: ctx!.activityId });
      const finals = policyEvaluations.map(
        (e: { policyEvaluations: { policyId?: string; outcome: string }[] }) => e.policyEvaluations.find((p) => !p.policyId)?.outcome,
      );
      assert.deepEqual(finals, ["OUTCOME_REQUIRES_AUTHENTICATORS", "OUTCOME_ALLOW"]);
      const { mfaStatuses } = await parent.getMfaStatus({ organizationId: subId, activityId: ctx!.activityId });
      assert.equal(mfaStatuses[0].satisfied, true);
    });

    it("without onMfaRequired the activity comes back waiting; the session cannot stamp it again, the parent's key cannot stamp it at all", async () => {
      const client = coreClient(softStamp);
      const res = await client.createPolicy(policyParams("still waiting"));
      assert.equal(res.activity.status, NEEDED);
      assert.equal(res.policyId, undefined);
      await assert.rejects(client.approveActivity({ fingerprint: res.activity.fingerprint }), /meets none of the steps/);
      await assert.rejects(parent.approveActivity({ organizationId: subId, fingerprint: res.activity.fingerprint }));
      const { activity } = await parent.getActivity({ organizationId: subId, activityId: res.activity.id });
      assert.equal(activity.status, NEEDED);
      assert.equal(activity.votes.length, 1);
      const { policies } = await parent.getPolicies({ organizationId: subId });
      assert.ok(!policies.some((p: { policyName: string }) => p.policyName === "still waiting"));
      // The user reads its MFA policies, and the user view carries them.
      const { mfaPolicies } = await client.getMfaPolicies({ userId });
      assert.equal(mfaPolicies.length, 1);
      const { user } = await parent.getUser({ organizationId: subId, userId });
      assert.deepEqual(
        user.mfaPolicies.map((p: { mfaPolicyId: string }) => p.mfaPolicyId),
        [mfaPolicies[0]!.mfaPolicyId],
      );
    });

    it("a parent's user whose MFA policy would hold an auth flow it starts in the sub-organization is refused there (403), held at home", async () => {
      const { mfaPolicyId } = await parent.createMfaPolicy({
        userId: init.userId,
        mfaPolicyName: "parent: passkey for OTP",
        condition: "activity.type == 'ACTIVITY_TYPE_INIT_OTP_V3'",
        requiredAuthenticationMethods: [
          { any: [{ type: "AUTHENTICATION_TYPE_API_KEY" }] },
          { any: [{ type: "AUTHENTICATION_TYPE_PASSKEY" }] },
        ],
        order: 0,
      });
      const mark = sink.mark();
      await assert.rejects(
        parent.initOtp({ organizationId: subId, otpType: "OTP_TYPE_EMAIL", contact: EMAIL, appName: "Sigil E2E" }),
        /holds this activity, but it runs in organization/,
      );
      const home = await parent.initOtp({
        organizationId: init.organizationId,
        otpType: "OTP_TYPE_EMAIL",
        contact: "nobody@example.com",
        appName: "Sigil E2E",
      });
      assert.equal(home.activity.status, NEEDED);
      assert.equal(sink.mark(), mark, "no mail was sent");
      await parent.deleteMfaPolicy({ userId: init.userId, mfaPolicyId });
    });

    it(
      "the browser's passkey (CDP virtual authenticator, @turnkey/webauthn-stamper) meets the step through onMfaRequired",
      { skip: browser },
      async () => {
        const client = coreClient(
          (payload) => page!.stamp(payload),
          async (ctx) => {
            await client.approveActivity({ fingerprint: ctx.fingerprint }, StamperType.Passkey);
          },
        );
        const res = await client.createPolicy(policyParams("browser approved"));
        assert.equal(res.activity.status, "ACTIVITY_STATUS_COMPLETED");
        const { activity } = await parent.getActivity({ organizationId: subId, activityId: res.activity.id });
        assert.equal(activity.votes.length, 2);
        const { mfaStatuses } = await parent.getMfaStatus({ organizationId: subId, activityId: res.activity.id });
        assert.equal(mfaStatuses[0].satisfiedMethods[1].type, "AUTHENTICATION_TYPE_PASSKEY");
      },
    );
  });
}
