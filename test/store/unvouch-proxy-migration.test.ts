// Migration 026_unvouch_proxy_signups on rows an older version left (docs/login-lookups.md §5):
// the contacts a token-less sign-up by the auth proxy's user was vouched for lose the mark;
// contacts the backend vouched for, a token proved, or a later login proved keep it. Both
// engines, the real store, `up` run twice (it must be safe to re-run).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { up } from "../../src/store/migrations/026_unvouch_proxy_signups.ts";
import { newId } from "../../src/store/util.ts";
import { engines } from "../helpers/server.ts";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";

for (const spec of engines()) {
  describe(`migration 026_unvouch_proxy_signups [${spec.name}]`, { skip: spec.skip }, () => {
    let s: ScratchStore;
    before(async () => (s = await scratchStore(spec.name)));
    after(async () => s?.cleanup());

    it("clears what the proxy's key vouched for, and nothing else; idempotent", async () => {
      const db = s.store.db;
      const top = s.orgId;
      const proxyUser = newId();
      const backendUser = newId();
      await db
        .insertInto("auth_proxy_configs")
        .values({
          id: newId(),
          organization_id: top,
          enabled: 1,
          user_id: proxyUser,
          public_key: "02" + "ab".repeat(32),
          private_key_sealed: "x",
          settings: "{}",
          policy_ids: "[]",
          created_at: 1,
          updated_at: 1,
        })
        .execute();
      /** A sign-up as an older version recorded it: the organization, its root user, the completed activity. */
      const signup = async (by: string, created: number, intent: Record<string, unknown>, user: { emailAt?: number; phoneAt?: number }) => {
        const org = newId();
        const userId = newId();
        await db
          .insertInto("organizations")
          .values({
            id: org,
            name: org,
            parent_id: top,
            root_quorum_threshold: 1,
            policy_version: 0,
            settings: "{}",
            created_at: created,
            updated_at: created,
          })
          .execute();
        await db
          .insertInto("users")
          .values({
            id: userId,
            organization_id: org,
            name: userId,
            email: `${userId}@example.com`,
            email_normalized: `${userId}@example.com`,
            phone: "+14155550100",
            email_verified_at: user.emailAt ?? null,
            phone_verified_at: user.phoneAt ?? null,
            created_at: created,
            updated_at: created,
          })
          .execute();
        await db
          .insertInto("activities")
          .values({
            id: newId(),
            organization_id: top,
            type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
            status: "ACTIVITY_STATUS_COMPLETED",
            fingerprint: newId(),
            intent: JSON.stringify({ subOrganizationName: org, ...intent }),
            result: JSON.stringify({ subOrganizationId: org, rootUserIds: [userId] }),
            failure: null,
            submitted_by: by,
            app_proofs: null,
            created_at: created,
            updated_at: created,
          })
          .execute();
        return userId;
      };
      const squatted = await signup(proxyUser, 100, {}, { emailAt: 100, phoneAt: 100 });
      const provedLater = await signup(proxyUser, 200, {}, { emailAt: 250 });
      const withToken = await signup(proxyUser, 300, { verificationToken: "<sealed>" }, { emailAt: 300 });
      const backendMade = await signup(backendUser, 400, {}, { emailAt: 400, phoneAt: 400 });

      await up(db as never);
      await up(db as never);

      const state = async (id: string) => {
        const r = await db
          .selectFrom("users")
          .select(["email_verified_at", "phone_verified_at"])
          .where("id", "=", id)
          .executeTakeFirstOrThrow();
        return [
          r.email_verified_at == null ? null : Number(r.email_verified_at),
          r.phone_verified_at == null ? null : Number(r.phone_verified_at),
        ];
      };
      assert.deepEqual(await state(squatted), [null, null]);
      assert.deepEqual(await state(provedLater), [250, null]);
      assert.deepEqual(await state(withToken), [300, null]);
      assert.deepEqual(await state(backendMade), [400, 400]);
    });
  });
}
