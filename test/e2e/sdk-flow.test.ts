// End-to-end flow through the official SDK clients only: @turnkey/http (TurnkeyClient +
// ApiKeyStamper) and @turnkey/sdk-server (Turnkey(...).apiClient(), which fills the
// envelope itself and polls activities). One real server per engine.
//
// The SDK errors carry the gRPC code but not the HTTP status, so the clients talk to the
// server through a transparent recording proxy (below): it forwards every byte unchanged
// and remembers the status and body of each exchange, so tests can assert both.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { TurnkeyClient, TurnkeyRequestError as HttpRequestError } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { Turnkey, TurnkeyRequestError as SdkRequestError, type TurnkeyApiClient } from "@turnkey/sdk-server";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { RecordingProxy } from "../helpers/policy-harness.ts";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyRec = Record<string, any>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COMPLETED = "ACTIVITY_STATUS_COMPLETED";
const FAILED = "ACTIVITY_STATUS_FAILED";
const ORG_NAME = "SDK Flow Org";
const EXPIRED_KEY = "Unauthenticated desc = expired api key publicKey";
const UNKNOWN_KEY = "could not find public key in organization or its parent organization";
const PERMISSION_ERROR_TYPE = "type.googleapis.com/errors.v1.PolicyEnginePermissionError";

// Bodies of the older activity versions the typed @turnkey/http methods do not declare.
type HttpSubOrgBody = Parameters<TurnkeyClient["createSubOrganization"]>[0];
type HttpCreateUsersBody = Parameters<TurnkeyClient["createUsers"]>[0];
type HttpCreateApiKeysBody = Parameters<TurnkeyClient["createApiKeys"]>[0];

const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;
const nowMs = () => String(Date.now());

/** Resolves once the wall clock has moved past `t` (at most ~1 ms later): whatever is
 * created after that gets a strictly later created_at than what was created before `t`. */
async function clockPast(t: number): Promise<void> {
  while (Date.now() <= t) await new Promise((r) => setImmediate(r));
}

function apiKeyParams(apiKeyName: string, key: P256KeyPair, expirationSeconds?: string) {
  return {
    apiKeyName,
    publicKey: key.publicKey,
    curveType: "API_KEY_CURVE_P256" as const,
    ...(expirationSeconds !== undefined ? { expirationSeconds } : {}),
  };
}

/** `{seconds, nanos}`, both decimal strings, no earlier than `sinceMs` and not in the future. */
function assertTimestamp(ts: unknown, sinceMs: number, what: string): void {
  const t = ts as AnyRec;
  assert.equal(typeof t?.seconds, "string", `${what}.seconds must be a string: ${JSON.stringify(ts)}`);
  assert.equal(typeof t?.nanos, "string", `${what}.nanos must be a string: ${JSON.stringify(ts)}`);
  assert.match(t.seconds, /^\d+$/, what);
  assert.match(t.nanos, /^\d+$/, what);
  assert.ok(Number(t.nanos) < 1e9, `${what}.nanos out of range`);
  const secs = Number(t.seconds);
  assert.ok(secs >= Math.floor(sinceMs / 1000) - 1, `${what} (${secs}) is before the test started (${sinceMs})`);
  assert.ok(secs <= Math.ceil(Date.now() / 1000) + 1, `${what} (${secs}) is in the future`);
}

interface ExpectedUser {
  userId: string;
  userName: string;
  userEmail?: string;
  userPhoneNumber?: string;
  apiKeys: { apiKeyName: string; publicKey: string }[];
  userTags: string[];
}

/** The SDK's full User shape, field by field. */
function assertUser(actual: unknown, exp: ExpectedUser, sinceMs: number): void {
  const u = actual as AnyRec;
  assert.equal(u.userId, exp.userId);
  assert.equal(u.userName, exp.userName);
  assert.equal(u.userEmail, exp.userEmail);
  assert.equal(u.userPhoneNumber, exp.userPhoneNumber);
  assert.deepEqual(u.authenticators, []);
  assert.deepEqual(u.oauthProviders, []);
  assert.deepEqual([...u.userTags].sort(), [...exp.userTags].sort());
  assert.ok(Array.isArray(u.apiKeys), "apiKeys must be an array");
  assert.equal(u.apiKeys.length, exp.apiKeys.length, JSON.stringify(u.apiKeys));
  for (const want of exp.apiKeys) {
    const k: AnyRec | undefined = (u.apiKeys as AnyRec[]).find((x) => x.credential?.publicKey === want.publicKey);
    assert.ok(k, `api key ${want.publicKey} missing from ${JSON.stringify(u.apiKeys)}`);
    assert.equal(k.credential.type, "CREDENTIAL_TYPE_API_KEY_P256");
    assert.equal(k.apiKeyName, want.apiKeyName);
    assert.match(k.apiKeyId, UUID);
    assertTimestamp(k.createdAt, sinceMs, "apiKey.createdAt");
    assertTimestamp(k.updatedAt, sinceMs, "apiKey.updatedAt");
  }
  assertTimestamp(u.createdAt, sinceMs, "user.createdAt");
  assertTimestamp(u.updatedAt, sinceMs, "user.updatedAt");
}

interface ExpectedError {
  /** HTTP status the server answered with. */
  status: number;
  /** gRPC code in the body (TurnkeyRequestError.code). */
  code: number | readonly number[];
  /** Substring of the server's message. */
  includes?: string;
  /** Prefix of the server's message. */
  startsWith?: string;
  /** Path the failing request went to. */
  path?: string;
}

interface CaughtError {
  code: number;
  details: AnyRec[] | null;
  /** The SDK's message: "Turnkey error <code>: <server message>[ (Details: ...)]". */
  sdkMessage: string;
  /** The `message` of the error body as the server sent it. */
  serverMessage: string;
}

for (const engine of engines()) {
  describe(`sdk flow (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance | undefined;
    let server: RunningServer | undefined;
    let proxy: RecordingProxy | undefined;
    let init: InitResult;
    let rootKey: P256KeyPair;
    let rootHttp: TurnkeyClient;
    let rootSdk: TurnkeyApiClient;
    const started = Date.now();

    const httpFor = (key: P256KeyPair) =>
      new TurnkeyClient({ baseUrl: proxy!.url }, new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey }));
    const sdkFor = (key: P256KeyPair, defaultOrganizationId: string) =>
      new Turnkey({
        apiBaseUrl: proxy!.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId,
      }).apiClient();

    /** Awaits `p`, which must fail with a TurnkeyRequestError matching `exp`. */
    async function expectError(p: Promise<unknown>, exp: ExpectedError): Promise<CaughtError> {
      const seen = proxy!.exchanges.length;
      let caught: unknown;
      try {
        await p;
      } catch (e) {
        caught = e;
      }
      return assertRequestError(caught, seen, exp);
    }

    /** `caught` (thrown by the call made when the proxy had seen `seen` exchanges) matches `exp`. */
    function assertRequestError(caught: unknown, seen: number, exp: ExpectedError): CaughtError {
      assert.ok(caught !== undefined, `expected the request to fail with HTTP ${exp.status}, but it succeeded`);
      assert.ok(
        caught instanceof HttpRequestError || caught instanceof SdkRequestError,
        `expected a TurnkeyRequestError, got ${String(caught)}`,
      );
      const err = caught;
      assert.ok(proxy!.exchanges.length > seen, "the failing call made no request");
      const ex = proxy!.last();
      const codes = typeof exp.code === "number" ? [exp.code] : exp.code;
      assert.ok(codes.includes(err.code), `gRPC code ${err.code}, expected ${codes.join(" or ")}: ${err.message}`);
      assert.equal(ex.status, exp.status, `HTTP status of ${ex.path}: ${ex.body}`);
      if (exp.path) assert.equal(ex.path, exp.path);
      const body = JSON.parse(ex.body) as AnyRec;
      assert.equal(body.code, err.code);
      assert.equal(typeof body.message, "string");
      assert.ok(err.message.startsWith(`Turnkey error ${err.code}: ${body.message}`), err.message);
      if (exp.includes !== undefined)
        assert.ok(body.message.includes(exp.includes), `message ${JSON.stringify(body.message)} lacks ${JSON.stringify(exp.includes)}`);
      if (exp.startsWith !== undefined) {
        assert.ok(
          body.message.startsWith(exp.startsWith),
          `message ${JSON.stringify(body.message)} does not start with ${JSON.stringify(exp.startsWith)}`,
        );
      }
      return { code: err.code, details: err.details as AnyRec[] | null, sdkMessage: err.message, serverMessage: body.message };
    }

    interface SubOrg {
      orgId: string;
      name: string;
      rootUserId: string;
      rootUserName: string;
      key: P256KeyPair;
      http: TurnkeyClient;
      sdk: TurnkeyApiClient;
    }

    /** A sub-organization with one root user holding a long-lived API key, via sdk-server (V8). */
    async function newSubOrg(parent: TurnkeyApiClient, parentOrgId: string, label: string): Promise<SubOrg> {
      const key = generateP256KeyPair();
      const name = uniq(label);
      const rootUserName = `${label}-root`;
      const res = await parent.createSubOrganization({
        organizationId: parentOrgId,
        subOrganizationName: name,
        rootUsers: [{ userName: rootUserName, apiKeys: [apiKeyParams(`${label}-key`, key)], authenticators: [], oauthProviders: [] }],
        rootQuorumThreshold: 1,
      });
      assert.equal(res.activity.status, COMPLETED);
      assert.match(res.subOrganizationId, UUID);
      const rootUserId = res.rootUserIds?.[0];
      assert.ok(rootUserId, `no rootUserIds in ${JSON.stringify(res)}`);
      return {
        orgId: res.subOrganizationId,
        name,
        rootUserId,
        rootUserName,
        key,
        http: httpFor(key),
        sdk: sdkFor(key, res.subOrganizationId),
      };
    }

    before(async () => {
      inst = await newInstance(engine.name);
      init = await sigilInit(inst, ["--name", ORG_NAME]);
      server = await startServer(inst);
      proxy = new RecordingProxy(server.url);
      await proxy.start();
      rootKey = { publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey };
      rootHttp = httpFor(rootKey);
      rootSdk = sdkFor(rootKey, init.organizationId);
    });

    after(async () => {
      await proxy?.stop();
      await server?.stop();
      await inst?.cleanup();
    });

    it("1. bootstrap: whoami names the root organization and its root user", async () => {
      const viaHttp = await rootHttp.getWhoami({ organizationId: init.organizationId });
      assert.equal(viaHttp.organizationId, init.organizationId);
      assert.equal(viaHttp.organizationName, ORG_NAME);
      assert.equal(viaHttp.userId, init.userId);
      assert.equal(viaHttp.username, "root");

      // sdk-server fills organizationId from defaultOrganizationId.
      const viaSdk = await rootSdk.getWhoami();
      assert.deepEqual(
        {
          organizationId: viaSdk.organizationId,
          organizationName: viaSdk.organizationName,
          userId: viaSdk.userId,
          username: viaSdk.username,
        },
        { organizationId: init.organizationId, organizationName: ORG_NAME, userId: init.userId, username: "root" },
      );

      const { apiKey } = await rootHttp.getApiKey({ organizationId: init.organizationId, apiKeyId: init.apiKeyId });
      assert.equal(apiKey.apiKeyId, init.apiKeyId);
      assert.equal(apiKey.credential.publicKey, init.apiPublicKey);
      assert.equal(apiKey.credential.type, "CREDENTIAL_TYPE_API_KEY_P256");
    });

    it("2. create_sub_organization V8 (sdk-server) and V7 (http); sub-org keys work there, parent keys read it", async () => {
      // V8 through sdk-server, root user with an API key.
      const keyA = generateP256KeyPair();
      const nameA = uniq("sub-a");
      const resA = await rootSdk.createSubOrganization({
        subOrganizationName: nameA,
        rootUsers: [
          {
            userName: "alice",
            userEmail: "alice@sub-a.example",
            apiKeys: [apiKeyParams("alice-key", keyA)],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        rootQuorumThreshold: 1,
      });
      const actA = resA.activity;
      assert.equal(actA.status, COMPLETED);
      assert.equal(actA.type, "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8");
      assert.equal(actA.organizationId, init.organizationId);
      assert.equal(actA.intent.createSubOrganizationIntentV8?.subOrganizationName, nameA);
      const subA = resA.subOrganizationId;
      assert.match(subA, UUID);
      assert.equal(resA.rootUserIds?.length, 1);
      const aliceId = resA.rootUserIds![0]!;
      assert.deepEqual(actA.result, { createSubOrganizationResultV8: { subOrganizationId: subA, rootUserIds: [aliceId] } });

      // V7 through @turnkey/http.
      const keyB = generateP256KeyPair();
      const nameB = uniq("sub-b");
      const resB = await rootHttp.createSubOrganization({
        type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
        timestampMs: nowMs(),
        organizationId: init.organizationId,
        parameters: {
          subOrganizationName: nameB,
          rootUsers: [{ userName: "bob", apiKeys: [apiKeyParams("bob-key", keyB)], authenticators: [], oauthProviders: [] }],
          rootQuorumThreshold: 1,
        },
      } as unknown as HttpSubOrgBody);
      const actB = resB.activity;
      assert.equal(actB.status, COMPLETED);
      assert.equal(actB.type, "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7");
      assert.equal(actB.intent.createSubOrganizationIntentV7?.subOrganizationName, nameB);
      const resultB = actB.result.createSubOrganizationResultV7 as AnyRec;
      assert.ok(resultB, `no createSubOrganizationResultV7 in ${JSON.stringify(actB.result)}`);
      const subB = resultB.subOrganizationId as string;
      assert.match(subB, UUID);
      assert.notEqual(subB, subA);
      assert.equal(resultB.rootUserIds?.length, 1);
      const bobId = resultB.rootUserIds[0] as string;

      // Each sub-org's own key: whoami there names the sub-org and its root user.
      const meA = await httpFor(keyA).getWhoami({ organizationId: subA });
      assert.deepEqual({ ...meA }, { organizationId: subA, organizationName: nameA, userId: aliceId, username: "alice" });
      const meASdk = await sdkFor(keyA, subA).getWhoami();
      assert.equal(meASdk.userId, aliceId);
      assert.equal(meASdk.organizationId, subA);
      const meB = await httpFor(keyB).getWhoami({ organizationId: subB });
      assert.deepEqual({ ...meB }, { organizationId: subB, organizationName: nameB, userId: bobId, username: "bob" });

      // The parent's root key reads the sub-org.
      const { user } = await rootHttp.getUser({ organizationId: subA, userId: aliceId });
      assertUser(
        user,
        {
          userId: aliceId,
          userName: "alice",
          userEmail: "alice@sub-a.example",
          apiKeys: [{ apiKeyName: "alice-key", publicKey: keyA.publicKey }],
          userTags: [],
        },
        started,
      );
      const { users } = await rootSdk.getUsers({ organizationId: subB });
      assert.deepEqual(
        users.map((u) => u.userId),
        [bobId],
      );
      assert.equal(users[0]!.apiKeys[0]!.credential.publicKey, keyB.publicKey);

      // Credentials are looked up in the target org and its ancestors, never sideways; downwards
      // only for whoami and the login types (docs/stamps.md §5.2), which then answer for the holder's org.
      const meFromParent = await httpFor(keyA).getWhoami({ organizationId: init.organizationId });
      assert.equal(meFromParent.organizationId, subA);
      assert.equal(meFromParent.userId, aliceId);
      await expectError(httpFor(keyA).getUsers({ organizationId: init.organizationId }), { status: 401, code: 16, includes: UNKNOWN_KEY });
      await expectError(httpFor(keyA).getUsers({ organizationId: subB }), { status: 401, code: 16, includes: UNKNOWN_KEY });
    });

    it("3. create_users V4 (sdk-server) and V3 (http); get_user and list_users return the full User shape", async () => {
      const org = await newSubOrg(rootSdk, init.organizationId, "users");
      const tag = await org.sdk.createUserTag({ userTagName: "staff", userIds: [] });
      assert.match(tag.userTagId, UUID);

      const keyD = generateP256KeyPair();
      const v4 = await org.sdk.createUsers({
        users: [
          {
            userName: "dana",
            userEmail: "Dana.V4@Example.com",
            userPhoneNumber: "+14155550104",
            apiKeys: [apiKeyParams("dana-key", keyD)],
            authenticators: [],
            oauthProviders: [],
            userTags: [tag.userTagId],
          },
        ],
      });
      const actV4 = v4.activity;
      assert.equal(actV4.status, COMPLETED);
      assert.equal(actV4.type, "ACTIVITY_TYPE_CREATE_USERS_V4");
      assert.equal(actV4.intent.createUsersIntentV4?.users?.[0]?.userName, "dana");
      assert.equal(v4.userIds.length, 1);
      const danaId = v4.userIds[0]!;
      assert.deepEqual(actV4.result, { createUsersResult: { userIds: [danaId] } });

      const keyE = generateP256KeyPair();
      const v3 = await org.http.createUsers({
        type: "ACTIVITY_TYPE_CREATE_USERS_V3",
        timestampMs: nowMs(),
        organizationId: org.orgId,
        parameters: {
          users: [
            {
              userName: "eve",
              userEmail: "eve.v3@example.com",
              userPhoneNumber: "+14155550105",
              apiKeys: [apiKeyParams("eve-key", keyE)],
              authenticators: [],
              oauthProviders: [],
              userTags: [tag.userTagId],
            },
          ],
        },
      } as unknown as HttpCreateUsersBody);
      const actV3 = v3.activity;
      assert.equal(actV3.status, COMPLETED);
      assert.equal(actV3.type, "ACTIVITY_TYPE_CREATE_USERS_V3");
      assert.equal(actV3.intent.createUsersIntentV3?.users?.[0]?.userName, "eve");
      const eveIds = actV3.result.createUsersResult?.userIds as string[];
      assert.equal(eveIds?.length, 1);
      const eveId = eveIds[0]!;
      assert.notEqual(eveId, danaId);

      const expected: ExpectedUser[] = [
        {
          userId: org.rootUserId,
          userName: org.rootUserName,
          apiKeys: [{ apiKeyName: "users-key", publicKey: org.key.publicKey }],
          userTags: [],
        },
        {
          userId: danaId,
          userName: "dana",
          userEmail: "Dana.V4@Example.com",
          userPhoneNumber: "+14155550104",
          apiKeys: [{ apiKeyName: "dana-key", publicKey: keyD.publicKey }],
          userTags: [tag.userTagId],
        },
        {
          userId: eveId,
          userName: "eve",
          userEmail: "eve.v3@example.com",
          userPhoneNumber: "+14155550105",
          apiKeys: [{ apiKeyName: "eve-key", publicKey: keyE.publicKey }],
          userTags: [tag.userTagId],
        },
      ];
      const got = new Map<string, unknown>();
      for (const exp of expected) {
        const { user } = await org.http.getUser({ organizationId: org.orgId, userId: exp.userId });
        assertUser(user, exp, started);
        got.set(exp.userId, user);
      }
      const { users } = await org.sdk.getUsers();
      assert.deepEqual(users.map((u) => u.userId).sort(), expected.map((e) => e.userId).sort());
      for (const u of users) {
        const exp = expected.find((e) => e.userId === u.userId)!;
        assertUser(u, exp, started);
        // list_users and get_user describe a user identically.
        assert.deepEqual(u, got.get(u.userId));
      }
      // The new users' own keys authenticate as them.
      const meD = await httpFor(keyD).getWhoami({ organizationId: org.orgId });
      assert.equal(meD.userId, danaId);
      assert.equal(meD.username, "dana");
    });

    it("4. list_suborgs: every filter type, and cursor pagination in creation order", async () => {
      const pager = await newSubOrg(rootSdk, init.organizationId, "pager");
      const tag = randomBytes(4).toString("hex");
      const pkKey = generateP256KeyPair();
      const userName = (i: number) => `${tag}-user-${i === 11 ? 10 : i}`; // children 10 and 11 share a username
      const email = (i: number) => `${tag}.user${i}@pager.example`;
      const phone = (i: number) => `+1415556${1000 + i}`;
      const children: string[] = [];
      for (let i = 0; i < 12; i++) {
        const res = await pager.sdk.createSubOrganization({
          subOrganizationName: `${tag}-child-${i}`,
          rootUsers: [
            {
              userName: userName(i),
              userEmail: email(i),
              userPhoneNumber: phone(i),
              apiKeys: i === 7 ? [apiKeyParams("child-7-key", pkKey)] : [],
              authenticators: [],
              oauthProviders: [],
            },
          ],
          rootQuorumThreshold: 1,
        });
        assert.equal(res.activity.status, COMPLETED);
        children.push(res.subOrganizationId);
        await clockPast(Date.now());
      }
      assert.equal(new Set(children).size, 12);

      const cases: { filterType: string; filterValue: string; expected: string[] }[] = [
        { filterType: "NAME", filterValue: `${tag}-child-3`, expected: [children[3]!] },
        { filterType: "NAME", filterValue: `${tag}-child-99`, expected: [] },
        { filterType: "NAME", filterValue: pager.name, expected: [] },
        { filterType: "USERNAME", filterValue: userName(4), expected: [children[4]!] },
        { filterType: "USERNAME", filterValue: userName(10), expected: [children[10]!, children[11]!] },
        { filterType: "USERNAME", filterValue: pager.rootUserName, expected: [] }, // a user of the parent itself
        { filterType: "USERNAME", filterValue: `${tag}-nobody`, expected: [] },
        { filterType: "EMAIL", filterValue: email(5), expected: [children[5]!] },
        { filterType: "EMAIL", filterValue: email(5).toUpperCase(), expected: [children[5]!] },
        { filterType: "EMAIL", filterValue: `${tag}.nobody@pager.example`, expected: [] },
        { filterType: "PHONE_NUMBER", filterValue: phone(6), expected: [children[6]!] },
        { filterType: "PHONE_NUMBER", filterValue: "+14155569999", expected: [] },
        { filterType: "PUBLIC_KEY", filterValue: pkKey.publicKey, expected: [children[7]!] },
        { filterType: "PUBLIC_KEY", filterValue: generateP256KeyPair().publicKey, expected: [] },
      ];
      for (const c of cases) {
        const viaHttp = await pager.http.getSubOrgIds({
          organizationId: pager.orgId,
          filterType: c.filterType,
          filterValue: c.filterValue,
        });
        assert.deepEqual(viaHttp.organizationIds, c.expected, `http ${c.filterType}=${c.filterValue}`);
        const viaSdk = await pager.sdk.getSubOrgIds({ filterType: c.filterType, filterValue: c.filterValue });
        assert.deepEqual(viaSdk.organizationIds, c.expected, `sdk-server ${c.filterType}=${c.filterValue}`);
      }

      // Default page: the first 10, oldest first.
      const first = await pager.http.getSubOrgIds({ organizationId: pager.orgId });
      assert.deepEqual(first.organizationIds, children.slice(0, 10));
      const all = await pager.sdk.getSubOrgIds({ paginationOptions: { limit: "100" } });
      assert.deepEqual(all.organizationIds, children);
      // The grandparent's key reads the same list (reads are allowed in sub-orgs).
      const viaRoot = await rootHttp.getSubOrgIds({ organizationId: pager.orgId, paginationOptions: { limit: "100" } });
      assert.deepEqual(viaRoot.organizationIds, children);
      // Only direct children are listed.
      const rootList = await rootSdk.getSubOrgIds({ paginationOptions: { limit: "100" } });
      assert.ok(rootList.organizationIds.includes(pager.orgId));
      assert.ok(!rootList.organizationIds.some((id) => children.includes(id)));

      // Walk with limit 5 and `after`.
      const pages: string[][] = [];
      let after: string | undefined;
      for (let n = 0; n < 6; n++) {
        const res = await pager.http.getSubOrgIds({
          organizationId: pager.orgId,
          paginationOptions: { limit: "5", ...(after ? { after } : {}) },
        });
        pages.push(res.organizationIds);
        if (res.organizationIds.length === 0) break;
        after = res.organizationIds.at(-1);
      }
      assert.deepEqual(pages, [children.slice(0, 5), children.slice(5, 10), children.slice(10, 12), []]);
      // `before` the first item of page 2 is page 1; before the first item there is nothing.
      const back = await pager.sdk.getSubOrgIds({ paginationOptions: { limit: "5", before: children[5]! } });
      assert.deepEqual(back.organizationIds, children.slice(0, 5));
      const back2 = await pager.http.getSubOrgIds({
        organizationId: pager.orgId,
        paginationOptions: { limit: "3", before: children[10]! },
      });
      assert.deepEqual(back2.organizationIds, children.slice(7, 10));
      const none = await pager.http.getSubOrgIds({ organizationId: pager.orgId, paginationOptions: { limit: "5", before: children[0]! } });
      assert.deepEqual(none.organizationIds, []);

      // limit out of range.
      for (const limit of ["0", "101"]) {
        await expectError(pager.http.getSubOrgIds({ organizationId: pager.orgId, paginationOptions: { limit } }), {
          status: 400,
          code: 3,
          path: "/public/v1/query/list_suborgs",
        });
        await expectError(pager.sdk.getSubOrgIds({ paginationOptions: { limit } }), { status: 400, code: 3 });
      }
    });

    it("5. user tags, update_user, delete_user_tags, delete_users; a root user cannot be deleted", async () => {
      const org = await newSubOrg(rootSdk, init.organizationId, "tags");
      const created = await org.sdk.createUsers({
        users: [{ userName: "frank", userEmail: "frank@tags.example", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      const frankId = created.userIds[0]!;
      assert.match(frankId, UUID);

      const ops = await org.sdk.createUserTag({ userTagName: "ops", userIds: [frankId] });
      const opsAct = ops.activity;
      assert.equal(opsAct.type, "ACTIVITY_TYPE_CREATE_USER_TAG");
      assert.deepEqual(opsAct.intent, { createUserTagIntent: { userTagName: "ops", userIds: [frankId] } });
      assert.match(ops.userTagId, UUID);
      assert.deepEqual(ops.userIds, [frankId]);
      const audit = await org.sdk.createUserTag({ userTagName: "audit", userIds: [] });
      assert.match(audit.userTagId, UUID);
      assert.notEqual(audit.userTagId, ops.userTagId);

      const listed = await org.http.listUserTags({ organizationId: org.orgId });
      assert.deepEqual(
        listed.userTags.map((t) => [t.tagId, t.tagName, t.tagType]).sort(),
        [
          [ops.userTagId, "ops", "TAG_TYPE_USER"],
          [audit.userTagId, "audit", "TAG_TYPE_USER"],
        ].sort(),
      );
      for (const t of listed.userTags) assertTimestamp(t.createdAt, started, "tag.createdAt");
      assert.deepEqual((await org.http.getUser({ organizationId: org.orgId, userId: frankId })).user.userTags, [ops.userTagId]);

      // update_user: name, email and the tag set (replaced).
      const upd = await org.sdk.updateUser({
        userId: frankId,
        userName: "franklin",
        userEmail: "franklin@tags.example",
        userTagIds: [audit.userTagId],
      });
      assert.equal(upd.activity.status, COMPLETED);
      assert.equal(upd.userId, frankId);
      const afterUpdate = (await org.http.getUser({ organizationId: org.orgId, userId: frankId })).user;
      assertUser(
        afterUpdate,
        { userId: frankId, userName: "franklin", userEmail: "franklin@tags.example", apiKeys: [], userTags: [audit.userTagId] },
        started,
      );

      // delete_user_tags lists the users that carried the tag.
      const del = await org.sdk.deleteUserTags({ userTagIds: [audit.userTagId] });
      assert.equal(del.activity.status, COMPLETED);
      assert.deepEqual(del.userTagIds, [audit.userTagId]);
      assert.deepEqual(del.userIds, [frankId]);
      const remaining = await org.sdk.listUserTags();
      assert.deepEqual(
        remaining.userTags.map((t) => t.tagId),
        [ops.userTagId],
      );
      assert.deepEqual((await org.http.getUser({ organizationId: org.orgId, userId: frankId })).user.userTags, []);

      // delete_users.
      const delUsers = await org.sdk.deleteUsers({ userIds: [frankId] });
      assert.equal(delUsers.activity.status, COMPLETED);
      assert.deepEqual(delUsers.userIds, [frankId]);
      await expectError(org.http.getUser({ organizationId: org.orgId, userId: frankId }), { status: 404, code: 5 });
      assert.deepEqual(
        (await org.sdk.getUsers()).users.map((u) => u.userId),
        [org.rootUserId],
      );

      // Deleting a root user is refused (FAILED_PRECONDITION / INVALID_ARGUMENT → HTTP 400), and changes nothing.
      await expectError(
        org.http.deleteUsers({
          type: "ACTIVITY_TYPE_DELETE_USERS",
          timestampMs: nowMs(),
          organizationId: org.orgId,
          parameters: { userIds: [org.rootUserId] },
        }),
        { status: 400, code: [3, 9], path: "/public/v1/submit/delete_users" },
      );
      const stillThere = await org.http.getUser({ organizationId: org.orgId, userId: org.rootUserId });
      assert.equal(stillThere.user.userId, org.rootUserId);
      assert.equal((await org.http.getWhoami({ organizationId: org.orgId })).userId, org.rootUserId);
    });

    it("6. create_api_keys V2 with expiry, V1; expired and deleted keys get 401; get_api_key(s); delete_api_keys", async () => {
      const org = await newSubOrg(rootSdk, init.organizationId, "keys");

      // V2, expiring in 2 s, for the sub-org's root user.
      const short = generateP256KeyPair();
      const createdAt = Date.now();
      const v2 = await org.sdk.createApiKeys({ userId: org.rootUserId, apiKeys: [apiKeyParams("short", short, "2")] });
      const v2Act = v2.activity;
      assert.equal(v2Act.status, COMPLETED);
      assert.equal(v2Act.type, "ACTIVITY_TYPE_CREATE_API_KEYS_V2");
      assert.equal(v2Act.intent.createApiKeysIntentV2?.apiKeys?.[0]?.expirationSeconds, "2");
      assert.equal(v2.apiKeyIds.length, 1);
      const shortId = v2.apiKeyIds[0]!;

      const shortClient = httpFor(short);
      const me = await shortClient.getWhoami({ organizationId: org.orgId });
      assert.equal(me.userId, org.rootUserId);
      assert.equal(me.organizationId, org.orgId);

      const { apiKey } = await org.http.getApiKey({ organizationId: org.orgId, apiKeyId: shortId });
      assert.equal(apiKey.apiKeyId, shortId);
      assert.equal(apiKey.apiKeyName, "short");
      assert.equal(apiKey.expirationSeconds, "2");
      assert.equal(apiKey.credential.publicKey, short.publicKey);
      assert.equal(apiKey.credential.type, "CREDENTIAL_TYPE_API_KEY_P256");
      assertTimestamp(apiKey.createdAt, started, "apiKey.createdAt");
      const keys = await org.sdk.getApiKeys({ userId: org.rootUserId });
      assert.deepEqual(
        keys.apiKeys.map((k) => [k.credential.publicKey, k.expirationSeconds]).sort(),
        [
          [org.key.publicKey, undefined],
          [short.publicKey, "2"],
        ].sort(),
      );

      // Poll (bounded) until the key stops working; it must stop because it expired.
      const deadline = Date.now() + 10_000;
      let expired: CaughtError | undefined;
      while (Date.now() < deadline) {
        const seen = proxy!.exchanges.length;
        let caught: unknown;
        try {
          const r = await shortClient.getWhoami({ organizationId: org.orgId });
          assert.equal(r.userId, org.rootUserId);
        } catch (e) {
          caught = e;
        }
        if (caught !== undefined) {
          expired = assertRequestError(caught, seen, { status: 401, code: 16, includes: EXPIRED_KEY, path: "/public/v1/query/whoami" });
          break;
        }
        await new Promise((r) => setTimeout(r, 100)); // poll interval; the loop condition is the synchronization
      }
      assert.ok(expired, "the 2 s key still worked after 10 s");
      assert.ok(Date.now() - createdAt >= 2000, `the key stopped working after ${Date.now() - createdAt} ms, before its 2 s expiry`);
      // The long-lived key of the same user is unaffected.
      assert.equal((await org.http.getWhoami({ organizationId: org.orgId })).userId, org.rootUserId);

      // V1 through @turnkey/http.
      const v1Key = generateP256KeyPair();
      const v1 = await org.http.createApiKeys({
        type: "ACTIVITY_TYPE_CREATE_API_KEYS",
        timestampMs: nowMs(),
        organizationId: org.orgId,
        parameters: { userId: org.rootUserId, apiKeys: [{ apiKeyName: "v1-key", publicKey: v1Key.publicKey }] },
      } as unknown as HttpCreateApiKeysBody);
      const v1Act = v1.activity;
      assert.equal(v1Act.status, COMPLETED);
      assert.equal(v1Act.type, "ACTIVITY_TYPE_CREATE_API_KEYS");
      assert.equal(v1Act.intent.createApiKeysIntent?.apiKeys?.[0]?.publicKey, v1Key.publicKey);
      const v1Ids = v1Act.result.createApiKeysResult?.apiKeyIds as string[];
      assert.equal(v1Ids?.length, 1);
      const v1Id = v1Ids[0]!;
      const v1Client = httpFor(v1Key);
      assert.equal((await v1Client.getWhoami({ organizationId: org.orgId })).userId, org.rootUserId);
      const v1Listed = (await org.http.getApiKey({ organizationId: org.orgId, apiKeyId: v1Id })).apiKey;
      assert.equal(v1Listed.credential.type, "CREDENTIAL_TYPE_API_KEY_P256");
      assert.equal(v1Listed.expirationSeconds, undefined);

      // delete_api_keys removes exactly that key.
      const del = await org.sdk.deleteApiKeys({ userId: org.rootUserId, apiKeyIds: [v1Id] });
      assert.equal(del.activity.status, COMPLETED);
      assert.deepEqual(del.apiKeyIds, [v1Id]);
      const afterDelete = await org.http.getApiKeys({ organizationId: org.orgId, userId: org.rootUserId });
      const ids = afterDelete.apiKeys.map((k) => k.apiKeyId);
      assert.ok(!ids.includes(v1Id), `deleted key still listed: ${JSON.stringify(ids)}`);
      assert.ok(afterDelete.apiKeys.some((k) => k.credential.publicKey === org.key.publicKey));
      await expectError(org.http.getApiKey({ organizationId: org.orgId, apiKeyId: v1Id }), { status: 404, code: 5 });
      await expectError(v1Client.getWhoami({ organizationId: org.orgId }), { status: 401, code: 16, includes: UNKNOWN_KEY });
    });

    it("7. idempotency: the same body twice is one activity; get_activity and list_activities", async () => {
      const org = await newSubOrg(rootSdk, init.organizationId, "idem");
      const body = {
        type: "ACTIVITY_TYPE_CREATE_USER_TAG" as const,
        timestampMs: nowMs(),
        organizationId: org.orgId,
        parameters: { userTagName: "idem-tag", userIds: [] as string[] },
      };
      const first = await org.http.createUserTag(body);
      const second = await org.http.createUserTag(body);
      assert.match(first.activity.id, UUID);
      assert.equal(second.activity.id, first.activity.id);
      assert.deepEqual(second.activity, first.activity);
      const tags = await org.http.listUserTags({ organizationId: org.orgId });
      assert.deepEqual(
        tags.userTags.map((t) => t.tagName),
        ["idem-tag"],
      );
      const tagId = tags.userTags[0]!.tagId;
      const idemId = first.activity.id;

      const { activity } = await org.http.getActivity({ organizationId: org.orgId, activityId: idemId });
      const a = activity as AnyRec;
      assert.equal(a.id, idemId);
      assert.equal(a.organizationId, org.orgId);
      assert.equal(a.status, COMPLETED);
      assert.equal(a.type, "ACTIVITY_TYPE_CREATE_USER_TAG");
      assert.deepEqual(a.intent, { createUserTagIntent: { userTagName: "idem-tag", userIds: [] } });
      assert.deepEqual(a.result, { createUserTagResult: { userTagId: tagId, userIds: [] } });
      assert.equal(typeof a.fingerprint, "string");
      assert.ok(a.fingerprint.length > 0);
      assert.equal(typeof a.canApprove, "boolean");
      assert.equal(typeof a.canReject, "boolean");
      assert.equal(a.votes.length, 1);
      const vote = a.votes[0] as AnyRec;
      assert.equal(vote.selection, "VOTE_SELECTION_APPROVED");
      assert.equal(vote.message, JSON.stringify(body));
      assert.equal(vote.activityId, idemId);
      assert.equal(vote.userId, org.rootUserId);
      assert.equal(vote.user?.userId, org.rootUserId);
      assert.equal(vote.publicKey, org.key.publicKey);
      assert.equal(typeof vote.signature, "string");
      assert.equal(vote.scheme, "SIGNATURE_SCHEME_TK_API_P256");
      assertTimestamp(vote.createdAt, started, "vote.createdAt");
      assert.deepEqual(activity, first.activity);

      // Three more activities, each on a later millisecond: newest first is then unambiguous.
      await clockPast(Date.now());
      const t2 = await org.http.createUserTag({ ...body, timestampMs: nowMs(), parameters: { userTagName: "second", userIds: [] } });
      await clockPast(Date.now());
      const t3 = await org.sdk.createUserTag({ userTagName: "third", userIds: [] });
      await clockPast(Date.now());
      const u = await org.sdk.createUsers({
        users: [{ userName: "gina", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      const ids = { idem: idemId, t2: t2.activity.id, t3: t3.activity.id, u: u.activity.id };
      assert.equal(new Set(Object.values(ids)).size, 4);
      const list = (opts: Omit<Parameters<TurnkeyClient["getActivities"]>[0], "organizationId">) =>
        org.http.getActivities({ organizationId: org.orgId, ...opts }).then((r) => r.activities.map((x) => x.id));

      assert.deepEqual(await list({}), [ids.u, ids.t3, ids.t2, ids.idem]);
      assert.deepEqual(await list({ filterByType: ["ACTIVITY_TYPE_CREATE_USER_TAG"] }), [ids.t3, ids.t2, ids.idem]);
      assert.deepEqual(await list({ filterByType: ["ACTIVITY_TYPE_CREATE_USERS_V4"] }), [ids.u]);
      assert.deepEqual(await list({ filterByStatus: [COMPLETED] }), [ids.u, ids.t3, ids.t2, ids.idem]);
      assert.deepEqual(await list({ filterByStatus: [FAILED] }), []);
      // Pagination: limit 2 walks with `after`; `before` returns the previous page.
      assert.deepEqual(await list({ paginationOptions: { limit: "2" } }), [ids.u, ids.t3]);
      assert.deepEqual(await list({ paginationOptions: { limit: "2", after: ids.t3 } }), [ids.t2, ids.idem]);
      assert.deepEqual(await list({ paginationOptions: { limit: "2", after: ids.idem } }), []);
      assert.deepEqual(await list({ paginationOptions: { limit: "2", before: ids.t2 } }), [ids.u, ids.t3]);
      assert.deepEqual(await list({ filterByType: ["ACTIVITY_TYPE_CREATE_USER_TAG"], paginationOptions: { limit: "1", after: ids.t3 } }), [
        ids.t2,
      ]);
      // sdk-server's getActivities answers the same, with the activity as get_activity shows it.
      const viaSdk = await org.sdk.getActivities({ filterByType: ["ACTIVITY_TYPE_CREATE_USER_TAG"], filterByStatus: [COMPLETED] });
      assert.deepEqual(
        viaSdk.activities.map((x) => x.id),
        [ids.t3, ids.t2, ids.idem],
      );
      assert.deepEqual(viaSdk.activities[2], activity);
      await expectError(org.http.getActivities({ organizationId: org.orgId, paginationOptions: { limit: "0" } }), { status: 400, code: 3 });
    });

    it("8. a non-root user is denied activities (403, code 7) but may still query", async () => {
      const noraKey = generateP256KeyPair();
      const created = await rootSdk.createUsers({
        users: [{ userName: "nora", apiKeys: [apiKeyParams("nora-key", noraKey)], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      const noraId = created.userIds[0]!;
      assert.match(noraId, UUID);
      const nora = httpFor(noraKey);
      const tagName = uniq("denied");
      const body = {
        type: "ACTIVITY_TYPE_CREATE_USER_TAG" as const,
        timestampMs: nowMs(),
        organizationId: init.organizationId,
        parameters: { userTagName: tagName, userIds: [] as string[] },
      };

      const denied = await expectError(nora.createUserTag(body), {
        status: 403,
        code: 7,
        startsWith: "request not authorized",
        path: "/public/v1/submit/create_user_tag",
      });
      assert.ok(denied.sdkMessage.startsWith("Turnkey error 7: request not authorized"), denied.sdkMessage);
      assert.ok(Array.isArray(denied.details), "details must be an array");
      const perm = denied.details!.find((d) => d["@type"] === PERMISSION_ERROR_TYPE);
      assert.ok(perm, `no PolicyEnginePermissionError in ${JSON.stringify(denied.details)}`);
      assert.equal(typeof perm.message, "string");
      assert.match(perm.activityId, UUID);
      const activityId = perm.activityId as string;

      // The same body again: the same denial, for the same activity.
      const again = await expectError(nora.createUserTag(body), { status: 403, code: 7, startsWith: "request not authorized" });
      assert.equal(again.details?.find((d) => d["@type"] === PERMISSION_ERROR_TYPE)?.activityId, activityId);
      // sdk-server raises the same denial.
      await expectError(sdkFor(noraKey, init.organizationId).createUserTag({ userTagName: uniq("denied-sdk"), userIds: [] }), {
        status: 403,
        code: 7,
        startsWith: "request not authorized",
      });

      // The denied activity is recorded as FAILED.
      const failed = await rootHttp.getActivities({
        organizationId: init.organizationId,
        filterByStatus: [FAILED],
        paginationOptions: { limit: "100" },
      });
      const listed = failed.activities.find((x) => x.id === activityId) as AnyRec | undefined;
      assert.ok(listed, `activity ${activityId} not in list_activities(FAILED)`);
      assert.equal(listed.status, FAILED);
      assert.equal(listed.type, "ACTIVITY_TYPE_CREATE_USER_TAG");
      assert.equal(listed.organizationId, init.organizationId);
      assert.ok(failed.activities.every((x) => x.status === FAILED));
      const completed = await rootHttp.getActivities({
        organizationId: init.organizationId,
        filterByStatus: [COMPLETED],
        paginationOptions: { limit: "100" },
      });
      assert.ok(!completed.activities.some((x) => x.id === activityId));
      const { activity } = await rootHttp.getActivity({ organizationId: init.organizationId, activityId });
      assert.equal(activity.status, FAILED);
      assert.deepEqual(activity.result, {});
      assert.equal((activity as AnyRec).failure?.code, 7, `failure of ${JSON.stringify(activity)}`);
      // Nothing was created.
      const tags = await rootHttp.listUserTags({ organizationId: init.organizationId });
      assert.ok(!tags.userTags.some((t) => t.tagName === tagName));

      // Queries by the same user still work.
      const me = await nora.getWhoami({ organizationId: init.organizationId });
      assert.deepEqual({ ...me }, { organizationId: init.organizationId, organizationName: ORG_NAME, userId: noraId, username: "nora" });
      const users = await nora.getUsers({ organizationId: init.organizationId });
      assert.ok(users.users.some((x) => x.userId === noraId));
      assert.ok(users.users.some((x) => x.userId === init.userId));
      const own = await nora.getActivity({ organizationId: init.organizationId, activityId });
      assert.equal(own.activity.id, activityId);
    });
  });
}
