// What reaches the API through the auth proxy is the browser's word, never the backend's
// (docs/login-lookups.md §1): anyone on the internet can send the proxy a sign-up, so a
// sign-up it forwards without a verification token vouches for no contact. Run against the
// real service and proxy (child process) on both engines; codes come through a real SMTP
// server; core's loginWithOtp is stamped with core's own AttestedStamper.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper, SignatureFormat } from "@turnkey/api-key-stamper";
import { AttestedStamper, AttestedScheme } from "@turnkey/core/dist/__stampers__/attested/base.js";
import { engines, rejection } from "../helpers/server.ts";
import { startProxyStack, type ProxyStack } from "../helpers/proxy-stack.ts";
import { generateP256, privateScalar, type P256Private } from "../../src/crypto/p256.ts";

let n = 0;
const address = (who: string) => `${who}-${++n}-${Date.now()}@example.com`;

for (const spec of engines()) {
  describe(`auth proxy sign-ups vouch for nothing [${spec.name}]`, { skip: spec.skip }, () => {
    let s: ProxyStack;
    before(async () => {
      s = await startProxyStack(spec);
    });
    after(async () => {
      await s?.stop();
    });

    const verifiedSubOrgs = async (email: string) => {
      const r = await s.api("query/list_verified_suborgs", { organizationId: s.init.organizationId, filterType: "EMAIL", filterValue: email });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return r.json.organizationIds as string[];
    };
    /** An anonymous browser's sign-up naming `email`, with the attacker's own key and no token. */
    const squat = async (email: string) => {
      const attacker = generateP256();
      const r = await s.proxy("/v1/signup_v2", { userEmail: email, apiKeys: [{ apiKeyName: "mine", publicKey: attacker.publicCompressed, curveType: "API_KEY_CURVE_P256" }], authenticators: [], oauthProviders: [] });
      assert.equal(r.status, 200, `a sign-up without a token is still a sign-up: ${JSON.stringify(r.json)}`);
      return r.json.organizationId as string;
    };
    /** core's loginWithOtp naming the parent: stamp_login stamped X-Stamp-Attested by the token's key. */
    async function loginWithOtp(t: { token: string; key: P256Private }): Promise<{ organization_id: string; user_id: string }> {
      const signer = new ApiKeyStamper({ apiPublicKey: t.key.publicCompressed, apiPrivateKey: privateScalar(t.key).toString("hex") });
      const stamper = new AttestedStamper({ sign: (payload: string, format: SignatureFormat) => signer.sign(payload, format) } as never);
      stamper.configure({ attestedIdentity: t.token, publicKey: t.key.publicCompressed, scheme: AttestedScheme.P256_VERIFICATION_TOKEN });
      const res = await new TurnkeyClient({ baseUrl: s.server.url }, stamper).stampLogin({
        type: "ACTIVITY_TYPE_STAMP_LOGIN",
        timestampMs: String(Date.now()),
        organizationId: s.init.organizationId,
        parameters: { publicKey: t.key.publicCompressed, expirationSeconds: "900", invalidateExisting: false },
      });
      const session = (res.activity.result as { stampLoginResult: { session: string } }).stampLoginResult.session;
      return JSON.parse(Buffer.from(session.split(".")[1]!, "base64url").toString("utf8"));
    }

    it("a token-less proxy sign-up leaves the email unverified; its owner's OTP sign-up and login through the proxy land in her own organization", async () => {
      const victim = address("victim");
      const attackerOrg = await squat(victim);
      // The backend's view: nobody has proved this address.
      assert.deepEqual(await verifiedSubOrgs(victim), []);
      const t = await s.verifiedEmail(victim);
      // core's account look-up with the token finds no account (the attacker's is not hers) …
      const none = await s.proxy("/v1/account", { filterType: "EMAIL", filterValue: victim, verificationToken: t.token });
      assert.equal(none.status, 200, JSON.stringify(none.json));
      assert.deepEqual(none.json, {}, "the attacker's organization is not offered to the address's owner");
      // … so it signs her up with the token, which verifies the contact, and logs her in there.
      const mine = await s.signUpWithOtp(t, victim);
      assert.notEqual(mine.organizationId, attackerOrg);
      assert.deepEqual(await verifiedSubOrgs(victim), [mine.organizationId]);
      const login = await s.otpLogin(t);
      assert.equal(login.status, 200, JSON.stringify(login.json));
      assert.equal(login.claims?.organization_id, mine.organizationId);
    });

    it("a token-less proxy sign-up naming an existing user's email blocks nothing: her loginWithOtp by the parent's id still reaches her", async () => {
      const carol = address("carol");
      // The app's backend signs Carol up with its own key: its word, so the email is vouched for.
      const made = await s.api("submit/create_sub_organization", {
        type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
        timestampMs: String(Date.now()),
        organizationId: s.init.organizationId,
        parameters: { subOrganizationName: "carol", rootQuorumThreshold: 1, rootUsers: [{ userName: "carol", userEmail: carol, apiKeys: [], authenticators: [], oauthProviders: [] }] },
      });
      const carolOrg = made.json.activity.result.createSubOrganizationResultV8.subOrganizationId as string;
      assert.deepEqual(await verifiedSubOrgs(carol), [carolOrg]);
      await squat(carol);
      assert.deepEqual(await verifiedSubOrgs(carol), [carolOrg], "the proxy's sign-up added no verified holder");
      const session = await loginWithOtp(await s.verifiedEmail(carol));
      assert.equal(session.organization_id, carolOrg);
    });

    it("a sign-up the proxy forwards with a token still verifies its contact; one naming another address is refused and writes nothing", async () => {
      const dave = address("dave");
      const t = await s.verifiedEmail(dave);
      const mine = await s.signUpWithOtp(t, dave);
      assert.deepEqual(await verifiedSubOrgs(dave), [mine.organizationId]);
      // The token proves dave's address only: a sign-up carrying it for another address fails.
      const other = address("eve");
      const refused = await rejection(s.signUpWithOtp(await s.verifiedEmail(dave), other));
      assert.match(refused.message, /400|verif/i);
      assert.deepEqual(await verifiedSubOrgs(other), []);
    });
  });
}
