// Migration 025_key_provenance on rows written before it (docs/login-lookups.md §3.4): keys
// with a vote become proved at their first vote; the root users' keys a top-level
// organization's own (non-proxy) credential wrote with a direct sub-organization become
// trusted; everything else starts neither. Run on both engines against the real store: the
// columns dropped (`down`), rows as an older version left them, then `up`, then the backfill
// again (it must be safe to re-run).
import { it } from "node:test";
import assert from "node:assert/strict";
import { backfill, down, up } from "../../src/store/migrations/025_key_provenance.ts";
import { newId } from "../../src/store/util.ts";
import { describeOnScratchStores, insertActivityRow } from "../helpers/store.ts";
import type { ActivityStatus } from "../../src/store/schema.ts";

describeOnScratchStores("migration 025_key_provenance", (scratch) => {
  it("proves voted keys, trusts the backend's sign-up keys only; idempotent", async () => {
    const s = scratch();
    const db = s.store.db;
    await down(db as never);
    const org = async (parent: string | null, created: number) => {
      const id = newId();
      await db
        .insertInto("organizations")
        .values({
          id,
          name: id,
          parent_id: parent,
          root_quorum_threshold: 1,
          policy_version: 0,
          settings: "{}",
          created_at: created,
          updated_at: created,
        })
        .execute();
      return id;
    };
    const user = async (organizationId: string, created: number) => {
      const id = newId();
      await db
        .insertInto("users")
        .values({
          id,
          organization_id: organizationId,
          name: id,
          email: null,
          email_normalized: null,
          phone: null,
          created_at: created,
          updated_at: created,
        })
        .execute();
      return id;
    };
    const key = async (organizationId: string, userId: string, created: number) => {
      const id = newId();
      const publicKey = `02${newId().replace(/-/g, "")}`;
      await db
        .insertInto("api_keys")
        .values({
          id,
          organization_id: organizationId,
          user_id: userId,
          name: id,
          public_key: publicKey,
          public_key_normalized: publicKey,
          curve: "API_KEY_CURVE_P256",
          credential_type: "CREDENTIAL_TYPE_API_KEY_P256",
          expiration_seconds: null,
          expires_at: null,
          created_at: created,
          updated_at: created,
        })
        .execute();
      return id;
    };
    const signUp = async (parent: string, by: string, created: number, o: { status?: ActivityStatus; votedBy?: string } = {}) => {
      const made = await org(parent, created);
      const rootKey = await key(made, await user(made, created), created);
      const activityId = await insertActivityRow(db, {
        organizationId: parent,
        type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
        submittedBy: by,
        result: { subOrganizationId: made, rootUserIds: [] },
        at: created,
        ...(o.status ? { status: o.status } : {}),
      });
      if (o.votedBy) await vote(activityId, by, parent, o.votedBy, newId(), created);
      return { made, rootKey };
    };
    const vote = async (activityId: string, userId: string, userOrg: string, publicKey: string, credentialId: string, created: number) => {
      await db
        .insertInto("votes")
        .values({
          id: newId(),
          activity_id: activityId,
          user_id: userId,
          user_organization_id: userOrg,
          selection: "VOTE_SELECTION_APPROVED",
          message: "{}",
          public_key: publicKey,
          signature: "00",
          scheme: "SIGNATURE_SCHEME_TK_API_P256",
          credential_id: credentialId,
          credential_type: "CREDENTIAL_TYPE_API_KEY_P256",
          created_at: created,
        })
        .execute();
    };

    const top = s.orgId;
    const backend = await user(top, 1);
    const proxyUser = await user(top, 2);
    const proxyPublicKey = `03${"ab".repeat(32)}`;
    await db
      .insertInto("auth_proxy_configs")
      .values({
        id: newId(),
        organization_id: top,
        enabled: 1,
        user_id: proxyUser,
        public_key: proxyPublicKey,
        private_key_sealed: "x",
        settings: "{}",
        policy_ids: "[]",
        created_at: 2,
        updated_at: 2,
      })
      .execute();

    const byBackend = await signUp(top, backend, 100);
    const laterKey = await key(byBackend.made, await user(byBackend.made, 150), 150);
    const byProxyUser = await signUp(top, proxyUser, 200);
    const stampedByProxyKey = await signUp(top, backend, 250, { votedBy: proxyPublicKey.toUpperCase() });
    const notCompleted = await signUp(top, backend, 275, { status: "ACTIVITY_STATUS_FAILED" });
    const tenant = await signUp(top, proxyUser, 300);
    const tenantUser = await user(tenant.made, 300);
    const nested = await signUp(tenant.made, tenantUser, 400);
    // A key that voted twice (in its own organization's activities), first at 500.
    const voted = await key(tenant.made, tenantUser, 450);
    for (const at of [600, 500]) {
      const activityId = await insertActivityRow(db, {
        organizationId: tenant.made,
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
        submittedBy: tenantUser,
        result: {},
        at,
      });
      await vote(activityId, tenantUser, tenant.made, "02aa", voted, at);
    }

    await up(db as never);
    await backfill(db as never);

    const state = async (id: string) => {
      const r = await db.selectFrom("api_keys").select(["trusted", "proved_at"]).where("id", "=", id).executeTakeFirstOrThrow();
      return [Number(r.trusted), r.proved_at == null ? null : Number(r.proved_at)];
    };
    assert.deepEqual(await state(byBackend.rootKey), [1, null]);
    assert.deepEqual(await state(laterKey), [0, null], "a key added after the sign-up is the tenant's");
    assert.deepEqual(await state(byProxyUser.rootKey), [0, null], "the auth proxy user's sign-up");
    assert.deepEqual(await state(stampedByProxyKey.rootKey), [0, null], "a sign-up stamped by the proxy's key");
    assert.deepEqual(await state(notCompleted.rootKey), [0, null]);
    assert.deepEqual(await state(nested.rootKey), [0, null], "a sub-organization's own sign-up below it");
    assert.deepEqual(await state(voted), [0, 500]);
  });
});
