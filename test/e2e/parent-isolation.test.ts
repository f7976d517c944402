// docs/request-path.md §5: a parent organization reads its sub-organizations but cannot write
// to them. A credential found in an ancestor of the target organization is refused every
// activity — votes included — with 403 before any policy is consulted, and nothing is
// recorded anywhere; the exceptions are the authentication and recovery flows whose
// definitions set parentMayStamp (each on the allow-list of pipeline/parent-writes.ts), which
// get one test each. Every registered activity type is tried, so a new one is covered by
// this file without editing it. Queries by the parent keep working.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { engines, type RunningServer } from "../helpers/server.ts";
import { expectError, partyFor, RecordingProxy, startHarness, type Harness, type Party } from "../helpers/policy-harness.ts";
import { stampedPost, type RawResponse } from "../helpers/raw-http.ts";
import { generateP256KeyPair, type P256KeyPair } from "../../src/crypto/keygen.ts";
import { ACTIVITIES, VOTES } from "../../src/activities/registry.ts";
import { isParentStampable } from "../../src/pipeline/parent-writes.ts";

const COMPLETED = "ACTIVITY_STATUS_COMPLETED";
const CONSENSUS = "ACTIVITY_STATUS_CONSENSUS_NEEDED";
const NOT_AUTHORIZED = "request not authorized: ";
const uniq = (label: string) => `${label}-${randomBytes(4).toString("hex")}`;

/** The 403 a parent's credential gets, as the SDK's error body. */
function assertParentRefused(res: RawResponse, what: string): void {
  const ctx = `${what}: HTTP ${res.status} ${res.text.slice(0, 400)}`;
  assert.equal(res.status, 403, ctx);
  assert.deepEqual(Object.keys(res.json).sort(), ["code", "details", "message"], ctx);
  assert.equal(res.json.code, 7, ctx);
  assert.ok(String(res.json.message).startsWith(NOT_AUTHORIZED), ctx);
  assert.match(res.json.message, /parent organization may read its sub-organizations but not submit/, ctx);
  assert.equal(res.json.details[0]["@type"], "type.googleapis.com/errors.v1.TurnkeyErrorDetail", ctx);
  assert.equal(res.json.details[0].turnkeyErrorCode, "REQUEST_NOT_AUTHORIZED", ctx);
  // Refused before the policy engine: no PolicyEnginePermissionError, no activity id.
  assert.equal(res.json.details.length, 1, ctx);
}

for (const engine of engines()) {
  describe(`a parent organization cannot write to its sub-organizations (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let server: RunningServer;
    let proxy: RecordingProxy;
    let root: Party;

    const party = (key: P256KeyPair, userId: string, orgId: string) => partyFor(proxy.url, key, userId, orgId);
    const fail = (p: Promise<unknown>, exp: Parameters<typeof expectError>[2]) => expectError(proxy, p, exp);

    /** A sub-organization of `parent`'s organization, created by `parent` in its own organization. */
    async function subOrg(parent: Party, label: string, roots = 1, threshold = 1, rootKeys?: P256KeyPair[]) {
      const keys = rootKeys ?? Array.from({ length: roots }, () => generateP256KeyPair());
      const name = uniq(label);
      const res = await parent.sdk.createSubOrganization({
        organizationId: parent.orgId,
        subOrganizationName: name,
        rootQuorumThreshold: threshold,
        rootUsers: keys.map((k, i) => ({
          userName: `${label}-root-${i}`,
          apiKeys: [{ apiKeyName: `${label}-key-${i}`, publicKey: k.publicKey, curveType: "API_KEY_CURVE_P256" as const }],
          authenticators: [],
          oauthProviders: [],
        })),
      });
      assert.equal(res.activity.status, COMPLETED);
      const userIds = res.rootUserIds ?? [];
      assert.equal(userIds.length, keys.length);
      return { orgId: res.subOrganizationId, name, roots: keys.map((k, i) => party(k, userIds[i]!, res.subOrganizationId)) };
    }

    const activityIds = async (viewer: Party, orgId: string) =>
      (await viewer.http.getActivities({ organizationId: orgId, paginationOptions: { limit: "100" } })).activities.map((a) => a.id);

    let harness: Harness | undefined;
    before(async () => {
      harness = await startHarness(engine.name, "Parent Org");
      ({ server, proxy, root } = harness);
    });

    after(async () => harness?.stop());

    it("the reported takeover: a parent root key can neither add a user to a sub-organization nor make it its root quorum", async () => {
      const sub = await subOrg(root, "victim");
      const [alice] = sub.roots;
      const parentActivities = await activityIds(root, root.orgId);
      const mallory = generateP256KeyPair();
      await fail(
        root.sdk.createUsers({
          organizationId: sub.orgId,
          users: [
            {
              userName: "mallory",
              apiKeys: [{ apiKeyName: "m", publicKey: mallory.publicKey, curveType: "API_KEY_CURVE_P256" }],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        }),
        { status: 403, code: 7, startsWith: NOT_AUTHORIZED, includes: "parent", path: "/public/v1/submit/create_users" },
      );
      await fail(root.sdk.updateRootQuorum({ organizationId: sub.orgId, threshold: 1, userIds: [root.userId] }), {
        status: 403,
        code: 7,
        startsWith: NOT_AUTHORIZED,
        path: "/public/v1/submit/update_root_quorum",
      });
      // The parent still reads the sub-organization (docs/policy-language.md §6.7) and sees it untouched.
      const users = (await root.http.getUsers({ organizationId: sub.orgId })).users;
      assert.deepEqual(
        users.map((u) => u.userName),
        ["victim-root-0"],
      );
      assert.deepEqual(await activityIds(root, sub.orgId), [], "an activity was recorded in the sub-organization");
      assert.deepEqual(await activityIds(root, root.orgId), parentActivities, "an activity was recorded in the parent");
      // The sub-organization's own root is unaffected: it writes, and mallory's key means nothing there.
      const own = await alice!.sdk.createUserTag({ userTagName: "own", userIds: [] });
      assert.equal(own.activity.status, COMPLETED);
      await fail(party(mallory, "", sub.orgId).http.getWhoami({ organizationId: sub.orgId }), { status: 401, code: 16 });
    });

    it("every registered activity type and vote not open to parents is refused to a parent credential, before validation and policy", async () => {
      const sub = await subOrg(root, "every-type");
      const grandchild = await subOrg(sub.roots[0]!, "grandchild");
      const routes = [...ACTIVITIES, ...VOTES].filter((r) => !r.parentMayStamp);
      assert.ok(routes.length >= 20, `only ${routes.length} routes registered`);
      const before = { sub: await activityIds(root, sub.orgId), parent: await activityIds(root, root.orgId) };
      // The grandparent's key and the direct parent's key, against the organization below them.
      const attempts: [P256KeyPair, string, string][] = [
        [root.key, sub.orgId, "parent → child"],
        [root.key, grandchild.orgId, "grandparent → grandchild"],
        [sub.roots[0]!.key, grandchild.orgId, "parent → grandchild"],
      ];
      for (const route of routes) {
        // Empty parameters would be a 400 for every type: a 403 shows the refusal comes first.
        const parameters = "selection" in route ? { fingerprint: "0".repeat(64) } : {};
        for (const [key, orgId, who] of attempts) {
          const body = JSON.stringify({ type: route.type, timestampMs: String(Date.now()), organizationId: orgId, parameters });
          assertParentRefused(await stampedPost(server.url, `/public/v1/submit/${route.op}`, body, key), `${route.type} (${who})`);
        }
      }
      assert.deepEqual(await activityIds(root, sub.orgId), before.sub);
      assert.deepEqual(await activityIds(root, grandchild.orgId), []);
      assert.deepEqual(await activityIds(root, root.orgId), before.parent);
    });

    // The exceptions (parentMayStamp, each on pipeline/parent-writes.ts's allow-list): the
    // parent check lets them through. They may then fail for other reasons (these bodies have
    // empty parameters), but never with the parent-write 403.
    for (const route of ACTIVITIES.filter((r) => r.parentMayStamp)) {
      it(`${route.type} is open to a parent credential in its sub-organizations (docs/request-path.md §5.2 exception)`, async () => {
        assert.ok(isParentStampable(route.type), `${route.type} opens itself to parents but is not on the allow-list`);
        const sub = await subOrg(root, `open-${route.op}`);
        const body = JSON.stringify({ type: route.type, timestampMs: String(Date.now()), organizationId: sub.orgId, parameters: {} });
        const res = await stampedPost(server.url, `/public/v1/submit/${route.op}`, body, root.key);
        const ctx = `${route.type}: HTTP ${res.status} ${res.text.slice(0, 400)}`;
        assert.ok(res.status < 500, ctx);
        if (res.status !== 200) {
          assert.deepEqual(Object.keys(res.json).sort(), ["code", "details", "message"], ctx);
          assert.doesNotMatch(String(res.json.message), /parent organization may read its sub-organizations but not submit/, ctx);
        }
        // The same body by an unrelated organization's key is still refused at authentication.
        const stranger = await stampedPost(server.url, `/public/v1/submit/${route.op}`, body, generateP256KeyPair());
        assert.equal(stranger.status, 401, stranger.text);
      });
    }

    it("stamp_login by a parent credential in a sub-organization logs the parent's own user in, in the parent", async () => {
      const sub = await subOrg(root, "parent-login");
      const session = generateP256KeyPair();
      const body = JSON.stringify({
        type: "ACTIVITY_TYPE_STAMP_LOGIN",
        timestampMs: String(Date.now()),
        organizationId: sub.orgId,
        parameters: { publicKey: session.publicKey },
      });
      const res = await stampedPost(server.url, "/public/v1/submit/stamp_login", body, root.key);
      assert.equal(res.status, 200, res.text);
      const jwt = String(res.json.activity.result.stampLoginResult.session);
      const claims = JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>;
      assert.deepEqual([claims.user_id, claims.organization_id], [root.userId, root.orgId]);
      // Nothing changed in the sub-organization: its only user has no new key.
      const users = (await root.http.getUsers({ organizationId: sub.orgId })).users;
      assert.deepEqual(
        users.map((u) => u.apiKeys.length),
        [1],
      );
    });

    it("a parent cannot vote on a sub-organization's pending activity; the sub-organization's roots still decide it", async () => {
      const sub = await subOrg(root, "two-roots", 2, 2);
      const [a, b] = sub.roots as [Party, Party];
      const pending = (
        await a.http.createUserTag({
          type: "ACTIVITY_TYPE_CREATE_USER_TAG",
          timestampMs: String(Date.now()),
          organizationId: sub.orgId,
          parameters: { userTagName: "needs-two", userIds: [] },
        })
      ).activity;
      assert.equal(pending.status, CONSENSUS);
      const vote = <T extends "ACTIVITY_TYPE_APPROVE_ACTIVITY" | "ACTIVITY_TYPE_REJECT_ACTIVITY">(type: T) => ({
        type,
        timestampMs: String(Date.now()),
        organizationId: sub.orgId,
        parameters: { fingerprint: pending.fingerprint },
      });
      await fail(root.http.approveActivity(vote("ACTIVITY_TYPE_APPROVE_ACTIVITY")), { status: 403, code: 7, includes: "parent" });
      await fail(root.http.rejectActivity(vote("ACTIVITY_TYPE_REJECT_ACTIVITY")), { status: 403, code: 7, includes: "parent" });
      // The parent reads it: still pending, one vote, and it may not vote.
      const seen = (await root.http.getActivity({ organizationId: sub.orgId, activityId: pending.id })).activity;
      assert.equal(seen.status, CONSENSUS);
      assert.equal(seen.votes.length, 1);
      assert.deepEqual([seen.canApprove, seen.canReject], [false, false]);
      const done = (await b.http.approveActivity(vote("ACTIVITY_TYPE_APPROVE_ACTIVITY"))).activity;
      assert.equal(done.status, COMPLETED);
    });

    it("the parent creates sub-organizations in its own organization, and reads them", async () => {
      const sub = await subOrg(root, "created-by-parent");
      const ids = (await root.http.getSubOrgIds({ organizationId: root.orgId, filterType: "NAME", filterValue: sub.name })).organizationIds;
      assert.deepEqual(ids, [sub.orgId]);
      const who = await root.http.getWhoami({ organizationId: sub.orgId });
      assert.deepEqual(
        [who.userId, who.organizationId],
        [root.userId, root.orgId],
        "the parent's user reads the sub-organization as itself",
      );
      assert.equal((await root.http.getUsers({ organizationId: sub.orgId })).users.length, 1);
      assert.deepEqual(await activityIds(root, sub.orgId), []);
    });

    it("the same key registered in the sub-organization acts there as the sub-organization's user", async () => {
      // docs/policy-language.md §6.7: the nearest organization's credential wins, so this is not a parent write.
      const sub = await subOrg(root, "shared-key", 1, 1, [root.key]);
      const inSub = party(root.key, sub.roots[0]!.userId, sub.orgId);
      const who = await inSub.http.getWhoami({ organizationId: sub.orgId });
      assert.equal(who.userId, sub.roots[0]!.userId);
      const tag = await inSub.sdk.createUserTag({ userTagName: "mine", userIds: [] });
      assert.equal(tag.activity.status, COMPLETED);
      assert.equal(tag.activity.votes[0]!.userId, sub.roots[0]!.userId);
    });
  });
}
