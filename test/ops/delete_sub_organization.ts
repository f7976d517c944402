import { it } from "node:test";
import assert from "node:assert/strict";
import { sql } from "kysely";
import {
  completed,
  failsWith,
  forbidden,
  invalidRequest,
  onSqlite,
  perEngine,
  precondition,
  addUsersWithKeys,
  type Harness,
} from "../helpers/inproc.ts";
import { subOrganization } from "../helpers/sub-organizations.ts";
import { deleteSubOrganization } from "../../src/activities/organizations/delete_sub_organization.ts";
import { DELETED_WITH_ORGANIZATION, KEPT_WITH_ORGANIZATION } from "../../src/store/organization-deletion.ts";

const OP = "delete_sub_organization";
const TYPE = "ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION";

/** Rows left with `organizationId` in each table that goes with the organization (only the non-empty ones). */
async function leftovers(h: Harness, organizationId: string): Promise<Record<string, number>> {
  const db = h.service.store.db;
  const left: Record<string, number> = {};
  for (const table of DELETED_WITH_ORGANIZATION) {
    const r = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where organization_id = ${organizationId}`.execute(db);
    const n = Number(r.rows[0]!.n);
    if (n > 0) left[table] = n;
  }
  return left;
}

const unknownOrganization = /could not find public key in organization/;

onSqlite("delete_sub_organization", (h) => {
  it("a sub-organization's own root user deletes it: its rows go, its activities stay, its id is unknown from then on", async () => {
    const sub = await subOrganization(h());
    completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [] }, { as: sub }),
      "createWalletResult",
    );
    completed(
      await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "t", userIds: [sub.userId] }, { as: sub }),
      "createUserTagResult",
    );
    const res = await h().submit(OP, TYPE, { deleteWithoutExport: true }, { as: sub });
    assert.deepEqual(completed(res, deleteSubOrganization), { subOrganizationUuid: sub.organizationId });
    assert.deepEqual(await leftovers(h(), sub.organizationId), {});
    const db = h().service.store.db;
    const kept = await db.selectFrom("activities").select("type").where("organization_id", "=", sub.organizationId).execute();
    assert.ok(kept.some((a) => a.type === TYPE) && kept.some((a) => a.type === "ACTIVITY_TYPE_CREATE_WALLET"));
    // Its own key is gone; its parent's key names an unknown organization (as for an id never used).
    failsWith(await h().query("get_organization", {}, { as: sub }), 401, 16, "PUBLIC_KEY_NOT_FOUND", unknownOrganization);
    failsWith(
      await h().query("get_organization", {}, { organizationId: sub.organizationId }),
      401,
      16,
      "PUBLIC_KEY_NOT_FOUND",
      unknownOrganization,
    );
    failsWith(
      await h().query("get_organization", {}, { organizationId: "00000000-0000-4000-8000-00000000abcd" }),
      401,
      16,
      "PUBLIC_KEY_NOT_FOUND",
      unknownOrganization,
    );
    const ids = (await h().query("list_suborgs", {})).json.organizationIds as string[];
    assert.ok(!ids.includes(sub.organizationId));
  });

  it("its parent is refused (403) and nothing is recorded", async () => {
    const sub = await subOrganization(h());
    forbidden(await h().submit(OP, TYPE, { deleteWithoutExport: true }, { organizationId: sub.organizationId }), /parent of organization/);
    const db = h().service.store.db;
    const recorded = await db
      .selectFrom("activities")
      .select("id")
      .where("organization_id", "=", sub.organizationId)
      .where("type", "=", TYPE)
      .execute();
    assert.equal(recorded.length, 0);
    assert.equal((await h().query("get_organization", {}, { as: sub })).status, 200);
  });

  it("a user of the sub-organization outside its root quorum is refused (403): the root quorum alone decides", async () => {
    const sub = await subOrganization(h());
    const [user] = await addUsersWithKeys(h(), 1, sub);
    const policy = { policyName: "all", effect: "EFFECT_ALLOW", condition: "true", consensus: "true", notes: "" };
    completed(await h().submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", policy, { as: sub }), "createPolicyResult");
    forbidden(await h().submit(OP, TYPE, { deleteWithoutExport: true }, { as: user }), /can only be approved by the root quorum/);
  });

  it("a wallet never exported needs deleteWithoutExport (400, nothing deleted)", async () => {
    const sub = await subOrganization(h());
    completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "w", accounts: [] }, { as: sub }),
      "createWalletResult",
    );
    invalidRequest(await h().submit(OP, TYPE, {}, { as: sub }), /never been exported/, ["parameters.deleteWithoutExport"]);
    invalidRequest(await h().submit(OP, TYPE, { deleteWithoutExport: false }, { as: sub }), /never been exported/, [
      "parameters.deleteWithoutExport",
    ]);
    assert.equal((await h().query("list_wallets", {}, { as: sub })).json.wallets.length, 1);
  });

  it("without wallets or keys, deleteWithoutExport may be left out", async () => {
    const sub = await subOrganization(h());
    completed(await h().submit(OP, TYPE, {}, { as: sub }), deleteSubOrganization);
  });

  it("a top-level organization is not a sub-organization (400)", async () => {
    const org = await h().newOrg();
    precondition(await h().submit(OP, TYPE, { deleteWithoutExport: true }, { as: org }), /top-level organization/);
  });

  it("a sub-organization with sub-organizations of its own is refused (400) until they are deleted", async () => {
    const sub = await subOrganization(h());
    const grandchild = await subOrganization(h(), {}, sub);
    precondition(await h().submit(OP, TYPE, { deleteWithoutExport: true }, { as: sub }), /sub-organizations of its own/);
    completed(await h().submit(OP, TYPE, {}, { as: grandchild }), deleteSubOrganization);
    completed(await h().submit(OP, TYPE, {}, { as: sub }), deleteSubOrganization);
  });

  it("refuses a non-boolean deleteWithoutExport (400)", async () => {
    const sub = await subOrganization(h());
    invalidRequest(await h().submit(OP, TYPE, { deleteWithoutExport: "yes" }, { as: sub }), /boolean/, ["parameters.deleteWithoutExport"]);
  });

  it("every table with an organization_id column is either deleted with the organization or kept on purpose", async () => {
    const tables = await h().service.store.db.introspection.getTables();
    const withOrg = tables
      .filter((t) => t.columns.some((c) => c.name === "organization_id"))
      .map((t) => t.name)
      .sort();
    const listed = [...DELETED_WITH_ORGANIZATION, ...KEPT_WITH_ORGANIZATION].sort();
    assert.deepEqual(withOrg, listed);
  });
});

perEngine("delete_sub_organization under concurrency", (h) => {
  it("a request authenticated before the deletion committed finds the organization gone when it settles (404, nothing recorded)", async () => {
    const sub = await subOrganization(h());
    // The moment between authentication and the activity's transaction: the credential is
    // still found, the organization already deleted.
    const db = h().service.store.db;
    await db.updateTable("organizations").set({ deleted_at: Date.now() }).where("id", "=", sub.organizationId).execute();
    const res = await h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "late", userIds: [] }, { as: sub });
    failsWith(res, 404, 5, "ORGANIZATION_NOT_FOUND", /not found/);
    assert.equal((await db.selectFrom("user_tags").select("id").where("organization_id", "=", sub.organizationId).execute()).length, 0);
    assert.equal(
      (
        await db
          .selectFrom("activities")
          .select("id")
          .where("organization_id", "=", sub.organizationId)
          .where("type", "=", "ACTIVITY_TYPE_CREATE_USER_TAG")
          .execute()
      ).length,
      0,
    );
  });

  it("activities in flight in the organization either land before the deletion (and are deleted with it) or are refused: nothing is left", async () => {
    const sub = await subOrganization(h());
    const writes = Array.from({ length: 8 }, (_, i) =>
      h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: `t${i}`, userIds: [] }, { as: sub }),
    );
    const [deleted, ...others] = await Promise.all([h().submit(OP, TYPE, { deleteWithoutExport: true }, { as: sub }), ...writes]);
    completed(deleted!, deleteSubOrganization);
    for (const r of others) assert.ok([200, 401, 404].includes(r.status), `unexpected ${r.status} ${JSON.stringify(r.json)}`);
    assert.deepEqual(await leftovers(h(), sub.organizationId), {});
  });
});

perEngine(
  "delete_sub_organization row lock",
  (h) => {
    it("an activity reaching its transaction while the deletion holds the organization row waits for it, then is refused (404, nothing recorded)", async () => {
      const sub = await subOrganization(h());
      const db = h().service.store.db;
      let late: Promise<{ status: number; json: Record<string, unknown> }> | undefined;
      // This transaction stands in for the deletion: it holds the row as delete_sub_organization does.
      await db.transaction().execute(async (tx) => {
        await tx.selectFrom("organizations").select("id").where("id", "=", sub.organizationId).forUpdate().execute();
        late = h().submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "late", userIds: [] }, { as: sub });
        // Until the activity's transaction waits on the row lock (polled, not slept).
        for (;;) {
          const waiting = await sql<{
            n: number;
          }>`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(db);
          if (Number(waiting.rows[0]!.n) > 0) break;
          await new Promise((r) => setImmediate(r));
        }
        await tx.updateTable("organizations").set({ deleted_at: Date.now() }).where("id", "=", sub.organizationId).execute();
      });
      failsWith(await late!, 404, 5, "ORGANIZATION_NOT_FOUND", /not found/);
      assert.equal((await db.selectFrom("user_tags").select("id").where("organization_id", "=", sub.organizationId).execute()).length, 0);
    });
  },
  ["postgres"],
);
