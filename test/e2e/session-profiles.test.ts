// Session profiles and the legacy sessions end to end (docs/sessions-and-network.md §6, §7): the
// real server (child process), both engines, the official clients only — @turnkey/sdk-server
// for profiles, logins and sessions, @turnkey/sdk-browser's TurnkeyIframeClient.refreshSession
// for a read-write session and its TurnkeyBrowserClient with `readOnlySession` for X-Session.
//
// refreshSession hands the credential bundle to the iframe it was built with
// (injectCredentialBundle), which decrypts it and stamps from then on. Turnkey's hosted iframe
// cannot run here; its stand-in below does what it does with the SDK's own function —
// @turnkey/crypto's decryptCredentialBundle with the embedded key — and then stamps with the
// decrypted key through @turnkey/api-key-stamper.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Turnkey } from "@turnkey/sdk-server";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { decryptCredentialBundle, getPublicKey } from "@turnkey/crypto";
import { uint8ArrayToHexString } from "@turnkey/encoding";
import { SessionType, TurnkeyBrowserClient, TurnkeyIframeClient } from "@turnkey/sdk-browser";
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
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";

const claimsOf = (jwt: string): Record<string, unknown> & { exp: number } =>
  JSON.parse(atob(jwt.split(".")[1]!)) as Record<string, unknown> & { exp: number };
const suffix = () => randomBytes(3).toString("hex");

/** The auth iframe's part in refreshSession: an embedded key, the bundle decrypted with it, then stamps with what it held. */
class IframeStandIn {
  private readonly embedded = generateP256KeyPair();
  private signer: ApiKeyStamper;
  injectedPublicKey?: string;
  readonly iframePublicKey: string;
  constructor(initial: P256KeyPair) {
    this.signer = new ApiKeyStamper({ apiPublicKey: initial.publicKey, apiPrivateKey: initial.privateKey });
    this.iframePublicKey = this.embedded.publicKey;
  }
  stamp(body: string) {
    return this.signer.stamp(body);
  }
  async getEmbeddedPublicKey(): Promise<string> {
    return this.embedded.publicKey;
  }
  async injectCredentialBundle(bundle: string): Promise<boolean> {
    const privateKey = decryptCredentialBundle(bundle, this.embedded.privateKey);
    const publicKey = uint8ArrayToHexString(getPublicKey(privateKey, true));
    this.signer = new ApiKeyStamper({ apiPublicKey: publicKey, apiPrivateKey: privateKey });
    this.injectedPublicKey = publicKey;
    return true;
  }
}

for (const engine of engines()) {
  describe(
    `session profiles and legacy sessions through the official SDKs (${engine.name})`,
    { skip: engine.skip, timeout: 120_000 },
    () => {
      let inst: Instance;
      let server: RunningServer;
      let init: InitResult;

      const apiClient = (key: { publicKey: string; privateKey: string }) =>
        new Turnkey({
          apiBaseUrl: server.url,
          apiPublicKey: key.publicKey,
          apiPrivateKey: key.privateKey,
          defaultOrganizationId: init.organizationId,
        }).apiClient();
      const root = () => apiClient({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });
      const activityCount = async () => (await root().getActivities({ organizationId: init.organizationId })).activities.length;

      before(async () => {
        inst = await newInstance(engine.name, { SIGIL_SESSION_MAX_SECONDS: "3600" });
        init = await sigilInit(inst, ["--name", "Profiles Org"]);
        server = await startServer(inst);
      });
      after(async () => {
        await server?.stop();
        await inst?.cleanup();
      });

      it("a profile-scoped session: allowed its one activity type, refused another (403, nothing recorded), lifetime capped", async () => {
        const { sessionProfileId } = await root().createSessionProfile({
          sessionProfileName: "tags only",
          scope: "activity.type == 'ACTIVITY_TYPE_CREATE_USER_TAG'",
          expirationSeconds: "300",
          notes: "e2e",
        });
        const listed = await root().getSessionProfiles({ organizationId: init.organizationId });
        assert.ok(listed.sessionProfiles.some((p) => p.sessionProfileId === sessionProfileId && p.expirationSeconds === "300"));
        const { sessionProfile } = await root().getSessionProfile({ organizationId: init.organizationId, sessionProfileId });
        assert.equal(sessionProfile.scope, "activity.type == 'ACTIVITY_TYPE_CREATE_USER_TAG'");

        const key = generateP256KeyPair();
        const login = await root().stampLogin({ publicKey: key.publicKey, expirationSeconds: "3600", sessionProfileId });
        const claims = claimsOf(login.session);
        assert.equal(claims.session_profile_id, sessionProfileId);
        assert.equal(claims.session_type, "tags only");
        // The profile's 300 s caps the 3600 s the login asked for.
        const left = claims.exp - Date.now() / 1000;
        assert.ok(left > 250 && left <= 301, `session lasts ${left} s`);

        const scoped = apiClient(key);
        const tag = await scoped.createUserTag({ userTagName: `t-${suffix()}`, userIds: [] });
        assert.equal(tag.activity.status, "ACTIVITY_STATUS_COMPLETED");
        const before = await activityCount();
        const refused = await rejection(scoped.createWallet({ walletName: `w-${suffix()}`, accounts: [] }));
        assert.equal(refused.code, 7, refused.message);
        assert.match(refused.message, /session's scope/);
        assert.equal(await activityCount(), before, "a refused request records nothing");
        // Reads are not scoped.
        assert.equal((await scoped.getWhoami({ organizationId: init.organizationId })).userId, init.userId);
      });

      it("a read-only session (X-Session from sdk-browser's client) reads and is refused an activity (403, nothing recorded)", async () => {
        const ro = await root().createReadOnlySession({});
        assert.equal(ro.userId, init.userId);
        const client = new TurnkeyBrowserClient({
          apiBaseUrl: server.url,
          organizationId: init.organizationId,
          readOnlySession: ro.session,
        });
        assert.equal((await client.getWhoami({ organizationId: init.organizationId })).userId, init.userId);
        const before = await activityCount();
        const refused = await rejection(client.createUserTag({ userTagName: `ro-${suffix()}`, userIds: [] }));
        assert.match(refused.message, /read-only session/);
        assert.equal(await activityCount(), before, "a refused request records nothing");
      });

      it("sdk-browser's refreshSession: a read-write session whose credential bundle decrypts to a key that stamps whoami", async () => {
        const iframe = new IframeStandIn({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });
        const client = new TurnkeyIframeClient({ apiBaseUrl: server.url, organizationId: init.organizationId, stamper: iframe });
        await client.refreshSession({ sessionType: SessionType.READ_WRITE, expirationSeconds: "600" });
        assert.ok(iframe.injectedPublicKey, "refreshSession injected a credential bundle");
        const keys = await root().getApiKeys({ organizationId: init.organizationId, userId: init.userId });
        const made = keys.apiKeys.find((k) => k.credential.publicKey === iframe.injectedPublicKey);
        assert.ok(made, "the decrypted key is the session key the server registered");
        assert.equal(made.credential.type, "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256");
        assert.equal(made.expirationSeconds, "600");
        // From now on the client stamps with the decrypted key.
        const who = await client.getWhoami({ organizationId: init.organizationId });
        assert.deepEqual([who.userId, who.organizationId], [init.userId, init.organizationId]);
      });
    },
  );
}
