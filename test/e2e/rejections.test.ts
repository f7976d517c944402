// Requests that must be refused with the right status, and leave nothing behind.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { engines, newInstance, sigilInit, startServer, type Instance, type RunningServer, type InitResult } from "../helpers/server.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

interface SdkError {
  code: number;
  message: string;
  details: { "@type": string; turnkeyErrorCode?: string; fieldViolations?: { field: string }[] }[];
}

async function rejection(p: Promise<unknown>): Promise<SdkError> {
  try {
    await p;
  } catch (err) {
    return err as SdkError;
  }
  assert.fail("expected the request to be rejected");
}

const ts = () => String(Date.now());
const user = (name: string, extra: Record<string, unknown> = {}) => ({
  userName: name,
  apiKeys: [] as unknown[],
  authenticators: [] as unknown[],
  oauthProviders: [] as unknown[],
  userTags: [] as string[],
  ...extra,
});

for (const engine of engines()) {
  describe(`rejections leave nothing behind (${engine.name})`, { skip: engine.skip, timeout: 120_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let boot: InitResult;
    let client: TurnkeyClient;
    let org: string;

    const createUsers = (parameters: { users: unknown[] }) =>
      client.createUsers({ type: "ACTIVITY_TYPE_CREATE_USERS_V4", timestampMs: ts(), organizationId: org, parameters: parameters as never });
    const userCount = async () => (await client.getUsers({ organizationId: org })).users.length;
    const activityCount = async () =>
      (await client.getActivities({ organizationId: org, paginationOptions: { limit: "100" } })).activities.length;

    before(async () => {
      inst = await newInstance(engine.name);
      boot = await sigilInit(inst);
      server = await startServer(inst);
      org = boot.organizationId;
      client = new TurnkeyClient(
        { baseUrl: server.url },
        new ApiKeyStamper({ apiPublicKey: boot.apiPublicKey, apiPrivateKey: boot.apiPrivateKey }),
      );
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("a batch whose second user is invalid creates no user at all", async () => {
      const before = await userCount();
      const activities = await activityCount();
      const e = await rejection(
        createUsers({
            users: [
              user("good", { userEmail: "good@example.com" }),
              user("bad", {
                apiKeys: [{ apiKeyName: "k", publicKey: "02" + "ff".repeat(32), curveType: "API_KEY_CURVE_P256" }],
              }),
            ],
          }),
      );
      assert.equal(e.code, 3);
      assert.match(e.message, /users\[1\]\.apiKeys\[0\]\.publicKey: public key is not a valid point/);
      assert.equal(await userCount(), before);
      assert.equal(await activityCount(), activities);
    });

    it("duplicate email in an organization is 409 ALREADY_EXISTS, case-insensitively", async () => {
      await createUsers({ users: [user("dana", { userEmail: "Dana@Example.com" })] });
      const before = await userCount();
      const e = await rejection(
        createUsers({ users: [user("dana2", { userEmail: "dana@example.COM" })] }),
      );
      assert.equal(e.code, 6);
      assert.match(e.message, /already exists/);
      assert.equal(await userCount(), before);
    });

    it("duplicate tag names and duplicate API keys are 409", async () => {
      await client.createUserTag({ type: "ACTIVITY_TYPE_CREATE_USER_TAG", timestampMs: ts(), organizationId: org, parameters: { userTagName: "ops", userIds: [] } });
      const e = await rejection(
        client.createUserTag({ type: "ACTIVITY_TYPE_CREATE_USER_TAG", timestampMs: ts(), organizationId: org, parameters: { userTagName: "ops", userIds: [] } }),
      );
      assert.equal(e.code, 6);
      const e2 = await rejection(
        client.createApiKeys({
          type: "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
          timestampMs: ts(),
          organizationId: org,
          parameters: { userId: boot.userId, apiKeys: [{ apiKeyName: "dup", publicKey: boot.apiPublicKey, curveType: "API_KEY_CURVE_P256" }] },
        }),
      );
      assert.equal(e2.code, 6);
    });

    it("more than 10 long-lived keys per user is 429 and adds none", async () => {
      const keys = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ apiKeyName: `k${i}`, publicKey: generateP256KeyPair().publicKey, curveType: "API_KEY_CURVE_P256" as const }));
      const created = await createUsers({ users: [user("keyholder", { apiKeys: keys(9) })] });
      const userId = (created.activity.result as { createUsersResult: { userIds: string[] } }).createUsersResult.userIds[0]!;
      const e = await rejection(
        client.createApiKeys({ type: "ACTIVITY_TYPE_CREATE_API_KEYS_V2", timestampMs: ts(), organizationId: org, parameters: { userId, apiKeys: keys(2) } }),
      );
      assert.equal(e.code, 8);
      assert.match(e.message, /maximum long-lived api keys/);
      assert.equal((await client.getApiKeys({ organizationId: org, userId })).apiKeys.length, 9);
    });

    it("features that are not built yet are refused by name, not silently dropped", async () => {
      const e = await rejection(
        createUsers({
            users: [user("p", { authenticators: [{ authenticatorName: "a", challenge: "c", attestation: {} }] })],
          }),
      );
      assert.equal(e.code, 3);
      assert.match(e.message, /authenticators: passkey authenticators are not supported/);
      const e2 = await rejection(
        client.createSubOrganization({
          type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
          timestampMs: ts(),
          organizationId: org,
          parameters: {
            subOrganizationName: "w",
            rootQuorumThreshold: 1,
            rootUsers: [user("r")],
            wallet: { walletName: "w", accounts: [] },
          } as never,
        }),
      );
      assert.match(e2.message, /wallet: not supported/);
    });

    it("a root quorum threshold above the number of root users is refused", async () => {
      const e = await rejection(
        client.createSubOrganization({
          type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
          timestampMs: ts(),
          organizationId: org,
          parameters: { subOrganizationName: "q", rootQuorumThreshold: 2, rootUsers: [user("r")] } as never,
        }),
      );
      assert.equal(e.code, 3);
      assert.equal(e.details[1]?.fieldViolations?.[0]?.field, "parameters.rootQuorumThreshold");
      assert.deepEqual((await client.getSubOrgIds({ organizationId: org, filterType: "NAME", filterValue: "q" })).organizationIds, []);
    });

    it("a root user's last key and root users themselves cannot be deleted", async () => {
      const e = await rejection(
        client.deleteApiKeys({ type: "ACTIVITY_TYPE_DELETE_API_KEYS", timestampMs: ts(), organizationId: org, parameters: { userId: boot.userId, apiKeyIds: [boot.apiKeyId] } }),
      );
      assert.equal(e.code, 9);
      assert.match(e.message, /last api key of root user/);
      const e2 = await rejection(
        client.deleteUsers({ type: "ACTIVITY_TYPE_DELETE_USERS", timestampMs: ts(), organizationId: org, parameters: { userIds: [boot.userId] } }),
      );
      assert.match(e2.message, /root quorum/);
      assert.equal((await client.getWhoami({ organizationId: org })).userId, boot.userId);
    });

    it("the same body submitted concurrently yields one activity and one tag", async () => {
      const stamper = new ApiKeyStamper({ apiPublicKey: boot.apiPublicKey, apiPrivateKey: boot.apiPrivateKey });
      const body = JSON.stringify({
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
        timestampMs: ts(),
        organizationId: org,
        parameters: { userTagName: "raced", userIds: [] },
      });
      const responses = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const stamp = await stamper.stamp(body);
          const res = await fetch(`${server.url}/public/v1/submit/create_user_tag`, {
            method: "POST",
            headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
            body,
          });
          return { status: res.status, body: (await res.json()) as { activity: { id: string } } };
        }),
      );
      assert.deepEqual(responses.map((r) => r.status), Array(8).fill(200));
      assert.equal(new Set(responses.map((r) => r.body.activity.id)).size, 1);
      const tags = (await client.listUserTags({ organizationId: org })).userTags.filter((t) => t.tagName === "raced");
      assert.equal(tags.length, 1);
    });

    it("an update with nothing to change, or of an unknown user, is refused", async () => {
      const e = await rejection(
        client.updateUser({ type: "ACTIVITY_TYPE_UPDATE_USER", timestampMs: ts(), organizationId: org, parameters: { userId: boot.userId } }),
      );
      assert.equal(e.code, 3);
      assert.match(e.message, /nothing to update/);
      const e2 = await rejection(
        client.updateUser({
          type: "ACTIVITY_TYPE_UPDATE_USER",
          timestampMs: ts(),
          organizationId: org,
          parameters: { userId: "00000000-0000-4000-8000-000000000000", userName: "x" },
        }),
      );
      assert.equal(e2.code, 5);
    });
  });
}
