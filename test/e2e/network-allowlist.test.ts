// IP allowlists end to end, with the official SDK (@turnkey/sdk-server) over real sockets:
// one client connects from 127.0.0.1, the other from 127.0.0.2 (a TCP relay that binds its
// outgoing side to 127.0.0.2, so the server's socket peer is that address). Then the
// trust-proxy setting: X-Forwarded-For is ignored by default and believed from trusted hops
// (IPv6 client addresses come that way: the server listens on IPv4 loopback only).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Turnkey, TurnkeyRequestError, type TurnkeyApiClient } from "@turnkey/sdk-server";
import { relayFrom } from "../helpers/relay.ts";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { goodStamp, rawPost, type RawResponse } from "../helpers/raw-http.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";

const sdkFor = (baseUrl: string, key: P256KeyPair, organizationId: string): TurnkeyApiClient =>
  new Turnkey({
    apiBaseUrl: baseUrl,
    apiPublicKey: key.publicKey,
    apiPrivateKey: key.privateKey,
    defaultOrganizationId: organizationId,
  }).apiClient();

async function refused(p: Promise<unknown>, address: string): Promise<void> {
  const err = await p.then(
    () => assert.fail(`expected a refusal of ${address}`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof TurnkeyRequestError, String(err));
  assert.equal(err.code, 7, err.message);
  assert.match(err.message, new RegExp(`IP address ${address.replace(/[.:]/g, "\\$&")} are not allowed`));
}

async function whoamiWith(
  baseUrl: string,
  key: P256KeyPair,
  organizationId: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const body = JSON.stringify({ organizationId });
  return rawPost(baseUrl, "/public/v1/query/whoami", body, { "X-Stamp": await goodStamp(key, body), ...headers });
}

for (const engine of engines()) {
  describe(`IP allowlists end to end (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let relay: Awaited<ReturnType<typeof relayFrom>>;
    let root: InitResult;
    let rootKey: P256KeyPair;
    let local: TurnkeyApiClient;
    let remote: TurnkeyApiClient;

    before(async () => {
      inst = await newInstance(engine.name);
      root = await sigilInit(inst);
      rootKey = { publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey };
      server = await startServer(inst);
      relay = await relayFrom("127.0.0.2", server.port);
      local = sdkFor(server.url, rootKey, root.organizationId);
      remote = sdkFor(relay.url, rootKey, root.organizationId);
    });
    after(async () => {
      await relay?.close();
      await server?.stop();
      await inst?.cleanup();
    });

    it("both addresses are served while no list is enabled", async () => {
      assert.equal((await local.getWhoami({})).organizationId, root.organizationId);
      assert.equal((await remote.getWhoami({})).organizationId, root.organizationId);
    });

    it("organization list: set/get, then 127.0.0.2 is refused (403, code 7) before authorization, with no activity", async () => {
      await local.setIpAllowlist({ enabled: true, rules: [{ cidr: "127.0.0.1", label: "local" }, { cidr: "10.20.30.40/20" }] });
      const { allowlist } = await local.getIpAllowlist({ organizationId: root.organizationId });
      assert.deepEqual(
        allowlist.rules.map((r) => [r.cidr, r.label]),
        [
          ["127.0.0.1/32", "local"],
          ["10.20.16.0/20", ""],
        ],
      );
      assert.equal(allowlist.enabled, true);
      const before = (await local.getActivities({})).activities.length;
      await refused(remote.getWhoami({}), "127.0.0.2");
      await refused(remote.createUserTag({ userTagName: "from-afar", userIds: [] }), "127.0.0.2");
      assert.equal((await local.getActivities({})).activities.length, before);
      assert.equal((await local.getWhoami({})).userId, root.userId);
    });

    it("key list: overrides the organization's for that key; removed, the key falls back", async () => {
      const key2 = generateP256KeyPair();
      await local.createApiKeys({
        userId: root.userId,
        apiKeys: [{ apiKeyName: "second", publicKey: key2.publicKey, curveType: "API_KEY_CURVE_P256" }],
      });
      const local2 = sdkFor(server.url, key2, root.organizationId);
      const remote2 = sdkFor(relay.url, key2, root.organizationId);
      await local.setIpAllowlist({ publicKey: key2.publicKey, rules: [{ cidr: "127.0.0.2", label: "relay" }] });
      const keyList = (await local.getIpAllowlist({ organizationId: root.organizationId, publicKey: key2.publicKey })).allowlist;
      assert.deepEqual(
        keyList.rules.map((r) => r.cidr),
        ["127.0.0.2/32"],
      );
      assert.equal((await remote2.getWhoami({})).userId, root.userId);
      await refused(local2.getWhoami({}), "127.0.0.1");
      // The root key still follows the organization's list.
      await refused(remote.getWhoami({}), "127.0.0.2");
      await local.removeIpAllowlist({ publicKey: key2.publicKey });
      await refused(remote2.getWhoami({}), "127.0.0.2");
      assert.equal((await local2.getWhoami({})).userId, root.userId);
      assert.deepEqual(
        (await local.getIpAllowlist({ organizationId: root.organizationId, publicKey: key2.publicKey })).allowlist.rules,
        [],
      );
    });

    it("a set that would lock its caller out is refused with 400", async () => {
      const err = await remote.setIpAllowlist({ enabled: true, rules: [] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      // From 127.0.0.2 the request is refused by the current list before anything (403)…
      assert.ok(err instanceof TurnkeyRequestError && err.code === 7);
      // …and from 127.0.0.1 the set itself is refused: it would exclude 127.0.0.1.
      const err2 = await local.setIpAllowlist({ enabled: true, rules: [{ cidr: "127.0.0.2" }] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err2 instanceof TurnkeyRequestError, String(err2));
      assert.equal(err2.code, 3);
      assert.match(err2.message, /would refuse the request making it: IP address 127\.0\.0\.1/);
    });

    it("X-Forwarded-For is ignored without SIGIL_TRUST_PROXY", async () => {
      const res = await whoamiWith(relay.url, rootKey, root.organizationId, { "X-Forwarded-For": "127.0.0.1" });
      assert.equal(res.status, 403, res.text);
      assert.match(res.json.message, /IP address 127\.0\.0\.2 /);
    });

    it("organization list removed: every address is served again", async () => {
      await local.removeIpAllowlist({});
      assert.equal((await remote.getWhoami({})).organizationId, root.organizationId);
      const { allowlist } = await local.getIpAllowlist({ organizationId: root.organizationId });
      assert.deepEqual(allowlist.rules, []);
    });

    it("SIGIL_TRUST_PROXY=1: the client is the last X-Forwarded-For hop; IPv6 clients and CIDR edges", async () => {
      await server.stop();
      server = await startServer(inst, ["--trust-proxy", "1"]);
      local = sdkFor(server.url, rootKey, root.organizationId);
      await local.setIpAllowlist({
        enabled: true,
        rules: [{ cidr: "127.0.0.1" }, { cidr: "2001:db8:abcd::/48", label: "v6" }, { cidr: "198.51.96.0/20" }],
      });
      // The SDK's own requests (no header) come from 127.0.0.1.
      assert.equal((await local.getWhoami({})).organizationId, root.organizationId);
      const from = (xff: string) => whoamiWith(server.url, rootKey, root.organizationId, { "X-Forwarded-For": xff });
      assert.equal((await from("2001:db8:abcd:ffff::1")).status, 200);
      assert.equal((await from("203.0.113.1, 198.51.111.255")).status, 200);
      for (const outside of ["2001:db8:abce::1", "198.51.112.0", "198.51.95.255", "127.0.0.1, 127.0.0.2"]) {
        const res = await from(outside);
        assert.equal(res.status, 403, `${outside}: ${res.text}`);
        assert.equal(res.json.code, 7);
        assert.ok(res.json.message.includes(`IP address ${outside.split(", ").pop()} `), res.json.message);
      }
    });

    it("SIGIL_TRUST_PROXY as a proxy list: only hops from listed proxies are believed", async () => {
      await server.stop();
      server = await startServer(inst, ["--trust-proxy", "127.0.0.1/32"]);
      await relay.close();
      relay = await relayFrom("127.0.0.2", server.port);
      // From the trusted proxy 127.0.0.1: the forwarded address counts.
      assert.equal((await whoamiWith(server.url, rootKey, root.organizationId, { "X-Forwarded-For": "198.51.100.1" })).status, 200);
      assert.equal((await whoamiWith(server.url, rootKey, root.organizationId, { "X-Forwarded-For": "192.0.2.1" })).status, 403);
      // From 127.0.0.2, not a listed proxy: its header is not believed, the peer is the client.
      const res = await whoamiWith(relay.url, rootKey, root.organizationId, { "X-Forwarded-For": "198.51.100.1" });
      assert.equal(res.status, 403, res.text);
      assert.match(res.json.message, /IP address 127\.0\.0\.2 /);
    });
  });
}
