// What reaches the API through the auth proxy is the browser's word, never the backend's
// (docs/login-lookups.md §1): anyone on the internet can send the proxy a sign-up, so a
// sign-up it forwards without a verification token vouches for no contact. Run against the
// real service and proxy (child process) on both engines; codes come through a real SMTP
// server; core's loginWithOtp is stamped with core's own AttestedStamper.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper, SignatureFormat } from "@turnkey/api-key-stamper";
import { WalletStamper } from "@turnkey/wallet-stamper";
import { AttestedStamper, AttestedScheme } from "@turnkey/core/dist/__stampers__/attested/base.js";
import { engines, rejection } from "../helpers/server.ts";
import { startProxyStack, type ProxyStack } from "../helpers/proxy-stack.ts";
import { generateP256, privateScalar, type P256Private } from "../../src/crypto/p256.ts";
import { newWallet } from "../helpers/eth-wallet.ts";

let n = 0;
const address = (who: string) => `${who}-${++n}-${Date.now()}@example.com`;

// A key registration nobody proved never receives someone else's login (docs/login-lookups.md
// §3). A wallet's public key is public, and the proxy's signup_v2 (anyone) or a tenant's
// create_api_keys registers any key without proof. core's loginOrSignupWithWallet signs a
// stamp_login naming the parent with the wallet first, then asks /v1/account PUBLIC_KEY, signs
// up through the proxy when nothing is found, and sends the signed login. The window for
// fresh unproved registrations is 4 s on this stack, so a stranger's registration can be
// outwaited (the contact tests do not depend on it).
const WINDOW_SECONDS = 4;

for (const spec of engines()) {
  describe(`auth proxy sign-ups vouch for nothing [${spec.name}]`, { skip: spec.skip }, () => {
    let s: ProxyStack;
    before(async () => {
      s = await startProxyStack(spec, { SIGIL_UNPROVED_KEY_LOGIN_WINDOW_SECONDS: String(WINDOW_SECONDS) });
    });
    after(async () => {
      await s?.stop();
    });

    const verifiedSubOrgs = async (email: string) => {
      const r = await s.api("query/list_verified_suborgs", {
        organizationId: s.init.organizationId,
        filterType: "EMAIL",
        filterValue: email,
      });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return r.json.organizationIds as string[];
    };
    /** An anonymous browser's sign-up naming `email`, with the attacker's own key and no token. */
    const squat = async (email: string) => {
      const attacker = generateP256();
      const r = await s.proxy("/v1/signup_v2", {
        userEmail: email,
        apiKeys: [{ apiKeyName: "mine", publicKey: attacker.publicCompressed, curveType: "API_KEY_CURVE_P256" }],
        authenticators: [],
        oauthProviders: [],
      });
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
        parameters: {
          subOrganizationName: "carol",
          rootQuorumThreshold: 1,
          rootUsers: [{ userName: "carol", userEmail: carol, apiKeys: [], authenticators: [], oauthProviders: [] }],
        },
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

    describe("a wallet key registered without proof receives no login", () => {
      const claimsOf = (session: string) =>
        JSON.parse(Buffer.from(session.split(".")[1]!, "base64url").toString("utf8")) as { organization_id: string; user_id: string };
      const walletKey = (publicKey: string, apiKeyName = `wallet-auth:${publicKey}`) => ({
        apiKeyName,
        publicKey,
        curveType: "API_KEY_CURVE_SECP256K1",
      });
      const p256Key = () => {
        const k = generateP256();
        return { publicKey: k.publicCompressed, privateKey: privateScalar(k).toString("hex") };
      };
      const proxySignup = async (apiKeys: object[]) => {
        const r = await s.proxy("/v1/signup_v2", { apiKeys, authenticators: [], oauthProviders: [] });
        assert.equal(r.status, 200, JSON.stringify(r.json));
        return r.json.organizationId as string;
      };
      const account = async (publicKey: string) => {
        const r = await s.proxy("/v1/account", { filterType: "PUBLIC_KEY", filterValue: publicKey });
        assert.equal(r.status, 200, JSON.stringify(r.json));
        return r.json.organizationId as string | undefined;
      };
      /** A stranger's sign-up through the proxy: the victim's wallet key, and a key of the attacker's own. */
      const strangerSignup = async (victimKey: string) => {
        const mine = p256Key();
        const organizationId = await proxySignup([
          walletKey(victimKey),
          { apiKeyName: "mine", publicKey: mine.publicKey, curveType: "API_KEY_CURVE_P256" },
        ]);
        return { organizationId, key: mine };
      };
      /**
       * Waits until every unproved registration made before this call is out of the window,
       * asking the server rather than the test's clock: a throwaway key is registered in two
       * organizations, one after the other, and a whoami it stamps naming the parent is refused
       * as ambiguous while both are fresh. Once it is not, the first of them — and so everything
       * registered before it — is out of the window.
       */
      const outwaitWindow = async () => {
        const probe = p256Key();
        const probeKey = { apiKeyName: "probe", publicKey: probe.publicKey, curveType: "API_KEY_CURVE_P256" };
        // Each with a second key: an organization the probe is the only way into would win at once.
        const other = () => ({ apiKeyName: "other", publicKey: p256Key().publicKey, curveType: "API_KEY_CURVE_P256" });
        await proxySignup([probeKey, other()]);
        await proxySignup([probeKey, other()]);
        const deadline = Date.now() + 60_000;
        for (;;) {
          const r = await s.api("query/whoami", { organizationId: s.init.organizationId }, probe);
          if (r.status === 200 || /could not find public key/.test(r.json.message)) return;
          assert.match(r.json.message, /more than one sub-organization recently/);
          assert.ok(Date.now() < deadline, "the probe's registrations never left the window");
          await new Promise((done) => setTimeout(done, 200));
        }
      };
      /** core's loginOrSignupWithWallet, step by step: the EIP-191 stamped login is built first. */
      const loginOrSignupWithWallet = async (w: ReturnType<typeof newWallet>) => {
        const client = new TurnkeyClient({ baseUrl: s.server.url }, new WalletStamper(w.wallet));
        const signed = await client.stampStampLogin({
          type: "ACTIVITY_TYPE_STAMP_LOGIN",
          timestampMs: String(Date.now()),
          organizationId: s.init.organizationId,
          parameters: { publicKey: generateP256().publicCompressed, expirationSeconds: "900" },
        });
        assert.match(Buffer.from(signed.stamp.stampHeaderValue, "base64url").toString("utf8"), /SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191/);
        const found = await account(w.publicKey);
        const signedUp = found ? undefined : await proxySignup([walletKey(w.publicKey)]);
        const res = await fetch(signed.url, {
          method: "POST",
          body: signed.body,
          headers: { "content-type": "application/json", [signed.stamp.stampHeaderName]: signed.stamp.stampHeaderValue },
        });
        const json = await res.json();
        const session = res.status === 200 ? claimsOf(json.activity.result.stampLoginResult.session) : undefined;
        return { found, signedUp, status: res.status, json, session };
      };
      const sessionKeysIn = async (organizationId: string, as: { publicKey: string; privateKey: string }) => {
        const r = await s.api(
          "query/get_api_keys",
          { organizationId, userId: (await s.api("query/whoami", { organizationId }, as)).json.userId },
          as,
        );
        assert.equal(r.status, 200, JSON.stringify(r.json));
        return (r.json.apiKeys as { credential: { type: string } }[]).filter((k) => k.credential.type === "CREDENTIAL_TYPE_LOGIN").length;
      };

      it("a stranger's proxy sign-up with the wallet's key, older than the window: /v1/account offers it to nobody, and the wallet's own sign-up and login land in its own organization", async () => {
        const w = newWallet();
        const stranger = await strangerSignup(w.publicKey);
        await outwaitWindow();
        const flow = await loginOrSignupWithWallet(w);
        assert.notEqual(
          flow.session?.organization_id,
          stranger.organizationId,
          "the wallet's login never lands in the stranger's organization",
        );
        assert.equal(flow.found, undefined, "the stranger's registration is not offered to the wallet");
        assert.ok(flow.signedUp && flow.signedUp !== stranger.organizationId);
        assert.equal(flow.status, 200, JSON.stringify(flow.json));
        assert.equal(flow.session?.organization_id, flow.signedUp);
        assert.equal(await sessionKeysIn(stranger.organizationId, stranger.key), 0, "no session was made in the stranger's organization");
        // The login proved the wallet's own registration: the next look-up offers it, and logging in again lands there.
        const again = await loginOrSignupWithWallet(w);
        assert.deepEqual(
          [again.found, again.signedUp, again.status, again.session?.organization_id],
          [flow.signedUp, undefined, 200, flow.signedUp],
        );
      });

      it("a stranger's registration inside the window: the wallet's own sign-up (its key the only way in) is the one, never the stranger's", async () => {
        const w = newWallet();
        const stranger = await strangerSignup(w.publicKey);
        const flow = await loginOrSignupWithWallet(w);
        assert.notEqual(
          flow.session?.organization_id,
          stranger.organizationId,
          "the wallet's login never lands in the stranger's organization",
        );
        assert.equal(flow.found, undefined);
        assert.equal(flow.status, 200, JSON.stringify(flow.json));
        assert.equal(flow.session?.organization_id, flow.signedUp);
        assert.equal(await sessionKeysIn(stranger.organizationId, stranger.key), 0);
      });

      it("two registrations inside the window that each give their organization another way in: refused (401), never guessed", async () => {
        const w = newWallet();
        const first = await strangerSignup(w.publicKey);
        const second = await strangerSignup(w.publicKey);
        const client = new TurnkeyClient({ baseUrl: s.server.url }, new WalletStamper(w.wallet));
        const signed = await client.stampStampLogin({
          type: "ACTIVITY_TYPE_STAMP_LOGIN",
          timestampMs: String(Date.now()),
          organizationId: s.init.organizationId,
          parameters: { publicKey: generateP256().publicCompressed, expirationSeconds: "900" },
        });
        const res = await fetch(signed.url, {
          method: "POST",
          body: signed.body,
          headers: { "content-type": "application/json", [signed.stamp.stampHeaderName]: signed.stamp.stampHeaderValue },
        });
        const json = (await res.json()) as { code: number; message: string };
        assert.equal(res.status, 401, JSON.stringify(json));
        assert.equal(json.code, 16);
        assert.match(json.message, /more than one sub-organization recently/);
        assert.equal(await sessionKeysIn(first.organizationId, first.key), 0);
        assert.equal(await sessionKeysIn(second.organizationId, second.key), 0);
      });

      it("a tenant copies the wallet's key into her own sub-organization (create_api_keys): once out of the window it is ignored; the wallet signs up and logs in as its own", async () => {
        const w = newWallet();
        const tenant = p256Key();
        const tenantOrg = await proxySignup([{ apiKeyName: "tenant", publicKey: tenant.publicKey, curveType: "API_KEY_CURVE_P256" }]);
        const userId = (await s.api("query/whoami", { organizationId: tenantOrg }, tenant)).json.userId as string;
        const copy = await s.api(
          "submit/create_api_keys",
          {
            type: "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
            timestampMs: String(Date.now()),
            organizationId: tenantOrg,
            parameters: { userId, apiKeys: [walletKey(w.publicKey, "copy")] },
          },
          tenant,
        );
        assert.equal(copy.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(copy.json));
        await outwaitWindow();
        const flow = await loginOrSignupWithWallet(w);
        assert.notEqual(flow.session?.organization_id, tenantOrg, "the wallet's login never lands in the tenant's organization");
        assert.equal(flow.found, undefined);
        assert.ok(flow.signedUp && flow.signedUp !== tenantOrg);
        assert.equal(flow.status, 200, JSON.stringify(flow.json));
        assert.equal(flow.session?.organization_id, flow.signedUp);
        assert.equal(await sessionKeysIn(tenantOrg, tenant), 0);
      });

      it("a key the backend registered for its user is the one, whether a tenant copied it before or after; /v1/account offers the backend's", async () => {
        const w = newWallet();
        const tenant = p256Key();
        const tenantOrg = await proxySignup([{ apiKeyName: "tenant", publicKey: tenant.publicKey, curveType: "API_KEY_CURVE_P256" }]);
        const userId = (await s.api("query/whoami", { organizationId: tenantOrg }, tenant)).json.userId as string;
        const copyKey = async (name: string) => {
          const r = await s.api(
            "submit/create_api_keys",
            {
              type: "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
              timestampMs: String(Date.now()),
              organizationId: tenantOrg,
              parameters: { userId, apiKeys: [walletKey(w.publicKey, name)] },
            },
            tenant,
          );
          assert.equal(r.json.activity?.status, "ACTIVITY_STATUS_COMPLETED", JSON.stringify(r.json));
        };
        // The tenant copies the key first (older than the backend's registration) …
        await copyKey("copy-before");
        // … then the app's backend signs the wallet's owner up with its own key.
        const made = await s.api("submit/create_sub_organization", {
          type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
          timestampMs: String(Date.now()),
          organizationId: s.init.organizationId,
          parameters: {
            subOrganizationName: `wallet-${Date.now()}`,
            rootQuorumThreshold: 1,
            rootUsers: [{ userName: "owner", apiKeys: [walletKey(w.publicKey)], authenticators: [], oauthProviders: [] }],
          },
        });
        const ownerOrg = made.json.activity.result.createSubOrganizationResultV8.subOrganizationId as string;
        // … and a stranger registers it again through the proxy afterwards (fresh).
        const stranger = await strangerSignup(w.publicKey);
        const flow = await loginOrSignupWithWallet(w);
        assert.notEqual(flow.session?.organization_id, tenantOrg, "the wallet's login never lands in the tenant's organization");
        assert.deepEqual(
          [flow.found, flow.signedUp, flow.status, flow.session?.organization_id],
          [ownerOrg, undefined, 200, ownerOrg],
          JSON.stringify(flow.json),
        );
        assert.equal(await sessionKeysIn(tenantOrg, tenant), 0);
        assert.equal(await sessionKeysIn(stranger.organizationId, stranger.key), 0);
      });
    });
  });
}
