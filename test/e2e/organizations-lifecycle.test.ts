// The organization lifecycle and features through the official clients (docs/organizations.md
// §7, §8), one child-process server per engine with a real SMTP server: a sub-organization
// deleted by its own root user and refused to its parent, its users unable to log in and none
// of its rows left afterwards; email OTP refused once its feature is removed (no mail sent) and
// served again once set.
//
// The owner deletes through @turnkey/core's generated client (TurnkeySDKClientBase), the
// `httpClient` that core's TurnkeyClient.deleteSubOrganization hands `{deleteWithoutExport}` to;
// TurnkeyClient itself needs a browser's storage to start, so it does not run in Node. The
// parent's refused attempt goes through @turnkey/sdk-server.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Turnkey } from "@turnkey/sdk-server";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { TurnkeySDKClientBase } from "@turnkey/core/dist/__generated__/sdk-client-base.js";
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
import { SmtpSink, e2eOtpLogin } from "../helpers/smtp-sink.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { openStore } from "../../src/store/db.ts";
import { DELETED_WITH_ORGANIZATION } from "../../src/store/organization-deletion.ts";

const UNKNOWN = /could not find public key in organization or its parent organization/;
const fresh = (label: string) => `${label}-${randomBytes(4).toString("hex")}@example.com`;

for (const spec of engines()) {
  describe(`organization lifecycle and features through the SDKs [${spec.name}]`, { skip: spec.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let sink: SmtpSink;
    let init: InitResult;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let parent: any;
    const clientFor = (key: { publicKey: string; privateKey: string }, organizationId: string) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: organizationId,
      }).apiClient();
    // get_organization is a query of @turnkey/http's TurnkeyClient (sdk-server has no method for it).
    const httpFor = (key: { publicKey: string; privateKey: string }) =>
      new TurnkeyClient({ baseUrl: server.url }, new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey }));
    const initKey = () => ({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });

    before(async () => {
      sink = await SmtpSink.start();
      inst = await newInstance(spec.name, { SMTP_URL: sink.url, SIGIL_SMTP_FROM: "Sigil <otp@sigil.test>" });
      init = await sigilInit(inst);
      server = await startServer(inst);
      parent = clientFor({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }, init.organizationId);
    });
    after(async () => {
      await server?.stop();
      await sink?.stop();
      await inst?.cleanup();
    });

    it("a sub-organization is deleted by its own root user, refused to its parent; its users cannot log in and none of its rows remain", async () => {
      const email = fresh("leaving");
      const ownerKey = generateP256KeyPair();
      const sub = await parent.createSubOrganization({
        subOrganizationName: "Leaving user",
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: "owner",
            userEmail: email,
            apiKeys: [{ apiKeyName: "k", publicKey: ownerKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        wallet: {
          walletName: "main",
          accounts: [
            {
              curve: "CURVE_SECP256K1",
              pathFormat: "PATH_FORMAT_BIP32",
              path: "m/44'/60'/0'/0/0",
              addressFormat: "ADDRESS_FORMAT_ETHEREUM",
            },
          ],
        },
      });
      const subId: string = sub.subOrganizationId;
      const owner = new TurnkeySDKClientBase({
        apiBaseUrl: server.url,
        organizationId: subId,
        apiKeyStamper: new ApiKeyStamper({ apiPublicKey: ownerKey.publicKey, apiPrivateKey: ownerKey.privateKey }),
        activityPoller: { intervalMs: 50, numRetries: 5 },
      });
      // The user logs in by email OTP (the parent's backend starts the flow, as sdk-server's do).
      const login = await e2eOtpLogin(parent, sink, server.url, subId, email);
      const session = clientFor(login.sessionKey, subId);
      assert.equal((await session.getWhoami({ organizationId: subId })).organizationId, subId);

      // The parent may not delete it: 403, nothing recorded.
      const byParent = await rejection(parent.deleteSubOrganization({ organizationId: subId, deleteWithoutExport: true }));
      assert.equal(byParent.code, 7, byParent.message);
      assert.match(byParent.message, /parent of organization/);
      const types = (await parent.getActivities({ organizationId: subId })).activities.map((a: { type: string }) => a.type);
      assert.ok(!types.includes("ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION"));

      // Its wallet was never exported: refused until deleteWithoutExport says so.
      const unexported = await rejection(owner.deleteSubOrganization({ deleteWithoutExport: false }));
      assert.equal(unexported.code, 3, unexported.message);
      assert.match(unexported.message, /never been exported/);
      const deleted = await owner.deleteSubOrganization({ deleteWithoutExport: true });
      assert.equal(deleted.subOrganizationUuid, subId);

      // From now on the id is unknown: to the session, to the owner's key, to the parent.
      assert.match((await rejection(session.getWhoami({ organizationId: subId }))).message, UNKNOWN);
      assert.match((await rejection(httpFor(ownerKey).getOrganization({ organizationId: subId }))).message, UNKNOWN);
      assert.match((await rejection(httpFor(initKey()).getOrganization({ organizationId: subId }))).message, UNKNOWN);
      assert.match(
        (await rejection(parent.initOtp({ organizationId: subId, otpType: "OTP_TYPE_EMAIL", contact: email, appName: "E2E" }))).message,
        UNKNOWN,
      );
      assert.ok(!(await parent.getSubOrgIds({})).organizationIds.includes(subId));
      // Logging in again by email finds no account: the parent's look-up names no sub-organization.
      assert.deepEqual((await parent.getVerifiedSubOrgIds({ filterType: "EMAIL", filterValue: email })).organizationIds, []);

      // Nothing of it is left in the database; its activities stay for audit.
      const store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined });
      try {
        for (const table of DELETED_WITH_ORGANIZATION) {
          // eslint-disable-next-line @typescript-eslint/no-explicit-any
          const rows = await (store.db as any).selectFrom(table).select("organization_id").where("organization_id", "=", subId).execute();
          assert.deepEqual(rows, [], `${table} still holds rows of the deleted organization`);
        }
        const kept = await store.db.selectFrom("activities").select("type").where("organization_id", "=", subId).execute();
        assert.ok(kept.some((a) => a.type === "ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION"));
        assert.ok(kept.some((a) => a.type === "ACTIVITY_TYPE_OTP_LOGIN_V2" || a.type === "ACTIVITY_TYPE_OTP_LOGIN"));
        const org = await store.db.selectFrom("organizations").select("deleted_at").where("id", "=", subId).executeTakeFirstOrThrow();
        assert.ok(Number(org.deleted_at) > 0);
      } finally {
        await store.close();
      }
    });

    it("the same sub-organization deleted by several requests at once: one succeeds, the others find it gone; never a 5xx (no lock-upgrade deadlock)", async () => {
      // Each deletion locks the organization's row for update from its transaction's first
      // statement (docs/organizations.md §7.3); had each first taken the shared lock every
      // activity takes and then upgraded it, two at once would deadlock on PostgreSQL (a 500).
      const rounds = 6;
      for (let i = 0; i < rounds; i++) {
        const ownerKey = generateP256KeyPair();
        const sub = await parent.createSubOrganization({
          subOrganizationName: `Twice deleted ${i}`,
          rootQuorumThreshold: 1,
          rootUsers: [
            {
              userName: "owner",
              apiKeys: [{ apiKeyName: "k", publicKey: ownerKey.publicKey, curveType: "API_KEY_CURVE_P256" }],
              authenticators: [],
              oauthProviders: [],
            },
          ],
        });
        const owner = clientFor(ownerKey, sub.subOrganizationId);
        const outcomes = await Promise.allSettled(
          Array.from({ length: 4 }, () => owner.deleteSubOrganization({ deleteWithoutExport: true })),
        );
        const ok = outcomes.filter((o) => o.status === "fulfilled");
        assert.equal(
          ok.length >= 1,
          true,
          `round ${i}: ${JSON.stringify(outcomes.map((o) => (o.status === "rejected" ? String(o.reason) : "ok")))}`,
        );
        for (const o of outcomes) {
          if (o.status === "fulfilled") continue;
          // Answered as an id that no longer exists (404, or 401 once its keys are gone): never 500/503.
          const e = o.reason as { code?: number; message?: string };
          assert.ok(e.code === 5 || e.code === 16, `round ${i}: ${e.code} ${e.message}`);
        }
      }
    });

    it("email OTP is refused once its feature is removed (no mail sent) and served again once set; configs and the name follow", async () => {
      const removed = await parent.removeOrganizationFeature({ name: "FEATURE_NAME_OTP_EMAIL_AUTH" });
      assert.ok(!removed.features.some((f: { name: string }) => f.name === "FEATURE_NAME_OTP_EMAIL_AUTH"));
      const contact = fresh("otp-off");
      const mark = sink.mark();
      const refused = await rejection(parent.initOtp({ otpType: "OTP_TYPE_EMAIL", contact, appName: "E2E" }));
      assert.equal(refused.code, 9, refused.message);
      assert.match(refused.message, /FEATURE_NAME_OTP_EMAIL_AUTH/);
      assert.equal(sink.mails.slice(mark).length, 0, "no mail may be sent");
      const configs = await parent.getOrganizationConfigs({});
      assert.ok(!configs.configs.features.some((f: { name: string }) => f.name === "FEATURE_NAME_OTP_EMAIL_AUTH"));
      assert.deepEqual(configs.configs.quorum.userIds, [init.userId]);

      await parent.setOrganizationFeature({ name: "FEATURE_NAME_OTP_EMAIL_AUTH", value: "" });
      const again = await parent.initOtp({ otpType: "OTP_TYPE_EMAIL", contact, appName: "E2E" });
      assert.ok(again.otpId);
      await sink.nextMail(contact, mark);

      const renamed = await parent.updateOrganizationName({ organizationName: "Renamed Org" });
      assert.equal(renamed.organizationName, "Renamed Org");
      assert.equal(
        (await httpFor(initKey()).getOrganization({ organizationId: init.organizationId })).organizationData.name,
        "Renamed Org",
      );
    });
  });
}
