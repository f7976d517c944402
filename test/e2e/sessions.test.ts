// Sessions end to end: the real server (child process), the official clients only —
// @turnkey/sdk-server's apiClient().stampLogin to log in, @turnkey/api-key-stamper (through
// @turnkey/http) stamping with the session key, @turnkey/crypto checking the session JWT with
// the key the server publishes. Both engines.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { Turnkey } from "@turnkey/sdk-server";
import { verifySessionJwtSignature } from "@turnkey/crypto";
import {
  engines,
  newInstance,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
  rejection,
} from "../helpers/server.ts";
import { pollUntil } from "../helpers/raw-http.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";

const MAX_SECONDS = 3600;
const EXPIRED_KEY = "Unauthenticated desc = expired api key publicKey";
const UNKNOWN_KEY = "could not find public key in organization or its parent organization";

interface Claims {
  exp: number;
  public_key: string;
  session_type: string;
  user_id: string;
  organization_id: string;
}

/** As core's parseSession: the payload through atob. */
const claimsOf = (jwt: string): Claims => JSON.parse(atob(jwt.split(".")[1]!)) as Claims;

for (const engine of engines()) {
  describe(`sessions through the official SDKs (${engine.name})`, { skip: engine.skip, timeout: 120_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;

    /** sdk-server's apiClient with a key pair (an API key or a session key). */
    const apiClient = (key: { publicKey: string; privateKey: string }, organizationId = init.organizationId) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: organizationId,
      }).apiClient();
    /** @turnkey/http with the api-key-stamper holding the session key. */
    const stampedBy = (key: P256KeyPair) =>
      new TurnkeyClient({ baseUrl: server.url }, new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey }));
    const rootKey = () => ({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });

    async function sessionJwtKey(): Promise<string> {
      const res = await fetch(`${server.url}/public/v1/discovery/keys`);
      assert.equal(res.status, 200);
      const { keys } = (await res.json()) as { keys: { purpose: string; status: string; publicKey: string }[] };
      return keys.find((k) => k.purpose === "SESSION_JWT" && k.status === "active")!.publicKey;
    }

    before(async () => {
      inst = await newInstance(engine.name, { SIGIL_SESSION_MAX_SECONDS: String(MAX_SECONDS) });
      init = await sigilInit(inst, ["--name", "Sessions Org"]);
      server = await startServer(inst);
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("stampLogin returns a session JWT the SDK verifies with the published key; the session key stamps requests", async () => {
      const session = generateP256KeyPair();
      const res = await apiClient(rootKey()).stampLogin({
        publicKey: session.publicKey,
        expirationSeconds: "900",
        invalidateExisting: false,
      });
      assert.equal(res.activity.status, "ACTIVITY_STATUS_COMPLETED");
      assert.ok(await verifySessionJwtSignature(res.session, await sessionJwtKey()), "session JWT signature");
      const claims = claimsOf(res.session);
      assert.deepEqual(
        [claims.public_key, claims.session_type, claims.user_id, claims.organization_id],
        [session.publicKey, "SESSION_TYPE_READ_WRITE", init.userId, init.organizationId],
      );
      assert.ok(Math.abs(claims.exp - (Date.now() / 1000 + 900)) < 30, String(claims.exp));
      const who = await stampedBy(session).getWhoami({ organizationId: init.organizationId });
      assert.deepEqual([who.userId, who.organizationId], [init.userId, init.organizationId]);
      const subs = await stampedBy(session).getSubOrgIds({ organizationId: init.organizationId });
      assert.ok(Array.isArray(subs.organizationIds));
      // The session key writes too (a READ_WRITE session): the user's own activity.
      const tag = await apiClient(session).createUserTag({ userTagName: `t-${randomBytes(3).toString("hex")}`, userIds: [] });
      assert.equal(tag.activity.status, "ACTIVITY_STATUS_COMPLETED");
    });

    it("refresh: stampLogin stamped by the session key itself, for a new key", async () => {
      const first = generateP256KeyPair();
      await apiClient(rootKey()).stampLogin({ publicKey: first.publicKey });
      const second = generateP256KeyPair();
      const res = await apiClient(first).stampLogin({ publicKey: second.publicKey, expirationSeconds: "900" });
      assert.equal(claimsOf(res.session).public_key, second.publicKey);
      assert.equal((await stampedBy(second).getWhoami({ organizationId: init.organizationId })).userId, init.userId);
    });

    it("invalidateExisting: older sessions answer 'could not find public key …' (core: SESSION_EXPIRED)", async () => {
      const older = generateP256KeyPair();
      await apiClient(rootKey()).stampLogin({ publicKey: older.publicKey });
      const newer = generateP256KeyPair();
      await apiClient(rootKey()).stampLogin({ publicKey: newer.publicKey, invalidateExisting: true });
      const err = await rejection(stampedBy(older).getWhoami({ organizationId: init.organizationId }));
      assert.ok(err.message.includes(UNKNOWN_KEY), err.message);
      assert.equal((await stampedBy(newer).getWhoami({ organizationId: init.organizationId })).userId, init.userId);
    });

    it("an expired session answers 'expired api key' (core: SESSION_EXPIRED)", async () => {
      const short = generateP256KeyPair();
      await apiClient(rootKey()).stampLogin({ publicKey: short.publicKey, expirationSeconds: "1" });
      const err = await pollUntil("the session to expire", 10_000, 100, async () => {
        try {
          await stampedBy(short).getWhoami({ organizationId: init.organizationId });
          return undefined;
        } catch (e) {
          return e as { message: string; code?: number };
        }
      });
      assert.ok(err.message.includes(EXPIRED_KEY), err.message);
      assert.equal(err.code, 16);
    });

    it("expirationSeconds above SIGIL_SESSION_MAX_SECONDS, 0 or not a number: 400 (code 3)", async () => {
      for (const bad of [String(MAX_SECONDS + 1), "0", "soon"]) {
        const err = await rejection(
          apiClient(rootKey()).stampLogin({ publicKey: generateP256KeyPair().publicKey, expirationSeconds: bad }),
        );
        assert.equal(err.code, 3, err.message);
        assert.match(err.message, /expiration/);
      }
    });

    it("a sub-organization user stamping with the parent's organization id is logged in in their own organization", async () => {
      const userKey = generateP256KeyPair();
      const sub = await apiClient(rootKey()).createSubOrganization({
        subOrganizationName: `sub-${randomBytes(3).toString("hex")}`,
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: "end-user",
            apiKeys: [{ apiKeyName: "k", publicKey: userKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
      });
      const session = generateP256KeyPair();
      const res = await apiClient(userKey, init.organizationId).stampLogin({ publicKey: session.publicKey });
      const claims = claimsOf(res.session);
      assert.deepEqual([claims.user_id, claims.organization_id], [sub.rootUserIds![0], sub.subOrganizationId]);
      // whoami with the parent's id answers with the sub-organization's user (credential found below).
      const who = await stampedBy(session).getWhoami({ organizationId: init.organizationId });
      assert.deepEqual([who.userId, who.organizationId], [sub.rootUserIds![0], sub.subOrganizationId]);
    });
  });
}
