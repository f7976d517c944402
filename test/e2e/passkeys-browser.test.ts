// Passkeys end to end, in a real browser: headless Debian Chromium with a CDP virtual
// authenticator makes a passkey on a page at http://localhost:<port> exactly as
// @turnkey/core does (getWebAuthnAttestation, docs/logins.md §6.2); the parent signs up a sub-organization
// with it as the root user's credential (@turnkey/sdk-server); then @turnkey/webauthn-stamper
// in the page stamps requests that @turnkey/http's TurnkeyClient sends from node (the server
// has no CORS) — whoami and stamp_login with the parent's organization id (resolved down to
// the sub-organization), create_api_keys in the sub-organization — and a tampered body and a
// replayed assertion are refused with the SDK's error. The server runs as a child process
// with SIGIL_WEBAUTHN_RP_ID=localhost and SIGIL_WEBAUTHN_ORIGINS=<the page's origin>.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { TurnkeyClient, TurnkeyRequestError } from "@turnkey/http";
import { Turnkey } from "@turnkey/sdk-server";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { browserMissing, openPasskeyPage, type PasskeyPage } from "../helpers/browser.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

const COMPLETED = "ACTIVITY_STATUS_COMPLETED";

type Stamper = ConstructorParameters<typeof TurnkeyClient>[1];

/** Expects the SDK to throw its request error for `call`, with `message` in it. */
async function refusedBySdk(call: () => Promise<unknown>, message: RegExp): Promise<TurnkeyRequestError> {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof TurnkeyRequestError, String(err));
    assert.equal(err.code, 16, err.message);
    assert.match(err.message, message);
    return err;
  }
  assert.fail("the request was accepted");
}

for (const spec of engines()) {
  describe(`passkeys in a browser [${spec.name}]`, { skip: spec.skip ?? browserMissing() }, () => {
    let page: PasskeyPage;
    let inst: Instance;
    let server: RunningServer;
    let root: InitResult;
    let subOrganizationId: string;
    let userId: string;
    let credentialId: string;
    /** TurnkeyClient whose stamps come from the page's WebauthnStamper. */
    let client: (stamper?: Stamper) => TurnkeyClient;
    const passkeyStamper: Stamper = { stamp: (payload: string) => page.stamp(payload) };

    before(async () => {
      page = await openPasskeyPage();
      inst = await newInstance(spec.name, { SIGIL_WEBAUTHN_RP_ID: "localhost", SIGIL_WEBAUTHN_ORIGINS: page.origin });
      root = await sigilInit(inst);
      server = await startServer(inst);
      client = (stamper = passkeyStamper) => new TurnkeyClient({ baseUrl: server.url }, stamper);
    });
    after(async () => {
      await page?.close();
      await server?.stop();
      await inst?.cleanup();
    });

    it("signs up a sub-organization whose root user's credential is the browser's passkey", async () => {
      const { encodedChallenge, attestation } = await page.createPasskey("alice");
      credentialId = attestation.credentialId;
      assert.deepEqual(attestation.transports, ["AUTHENTICATOR_TRANSPORT_INTERNAL"]);
      const parent = new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: root.apiPublicKey,
        apiPrivateKey: root.apiPrivateKey,
        defaultOrganizationId: root.organizationId,
      }).apiClient();
      const res = await parent.createSubOrganization({
        subOrganizationName: "browser passkey",
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: "alice",
            apiKeys: [],
            authenticators: [{ authenticatorName: "browser", challenge: encodedChallenge, attestation: attestation as never }],
            oauthProviders: [],
          },
        ],
      });
      subOrganizationId = res.subOrganizationId;
      userId = res.rootUserIds![0]!;
      const { user } = await parent.getUser({ organizationId: subOrganizationId, userId });
      assert.equal(user.authenticators.length, 1);
      assert.equal(user.authenticators[0]!.credentialId, credentialId);
      assert.equal(user.authenticators[0]!.attestationType, "none");
      const { organizationIds } = await parent.getSubOrgIds({
        organizationId: root.organizationId,
        filterType: "CREDENTIAL_ID",
        filterValue: credentialId,
      });
      assert.deepEqual(organizationIds, [subOrganizationId]);
    });

    it("the passkey's whoami with the parent's organization id is resolved down to the sub-organization", async () => {
      const who = await client().getWhoami({ organizationId: root.organizationId });
      assert.equal(who.userId, userId);
      assert.equal(who.organizationId, subOrganizationId);
    });

    it("the passkey signs create_api_keys in the sub-organization", async () => {
      const key = generateP256KeyPair();
      const res = await client().createApiKeys({
        type: "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
        timestampMs: String(Date.now()),
        organizationId: subOrganizationId,
        parameters: { userId, apiKeys: [{ apiKeyName: "from passkey", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }] },
      });
      assert.equal(res.activity.status, COMPLETED);
      assert.equal(res.activity.result.createApiKeysResult?.apiKeyIds.length, 1);
      assert.equal(res.activity.votes[0]!.user.authenticators[0]!.credentialId, credentialId);
    });

    it("stamp_login with the parent's organization id logs the sub-organization's user in", async () => {
      const session = generateP256KeyPair();
      const res = await client().stampLogin({
        type: "ACTIVITY_TYPE_STAMP_LOGIN",
        timestampMs: String(Date.now()),
        organizationId: root.organizationId,
        parameters: { publicKey: session.publicKey, expirationSeconds: "900" },
      });
      assert.equal(res.activity.status, COMPLETED);
      assert.equal(res.activity.organizationId, subOrganizationId);
      const jwt = res.activity.result.stampLoginResult!.session;
      const claims = JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as {
        organization_id: string;
        user_id: string;
        public_key: string;
      };
      assert.deepEqual([claims.organization_id, claims.user_id, claims.public_key], [subOrganizationId, userId, session.publicKey]);
    });

    it("refuses a body other than the one the passkey signed, with the SDK's error", async () => {
      const tampering: Stamper = { stamp: (payload: string) => page.stamp(payload.replace(subOrganizationId, root.organizationId)) };
      await refusedBySdk(() => client(tampering).getWhoami({ organizationId: subOrganizationId }), /could not verify WebAuthN signature/);
    });

    it("refuses a replayed assertion (the signature counter did not move), with the SDK's error", async () => {
      const before = (await page.credentials())[0]!.signCount;
      let first: Awaited<ReturnType<PasskeyPage["stamp"]>> | undefined;
      const replaying: Stamper = { stamp: async (payload: string) => (first ??= await page.stamp(payload)) };
      const who = await client(replaying).getWhoami({ organizationId: subOrganizationId });
      assert.equal(who.userId, userId);
      assert.ok((await page.credentials())[0]!.signCount > before, "the virtual authenticator counts signatures");
      await refusedBySdk(() => client(replaying).getWhoami({ organizationId: subOrganizationId }), /signature counter did not increase/);
      // The passkey itself still works.
      assert.equal((await client().getWhoami({ organizationId: subOrganizationId })).userId, userId);
    });
  });
}
