// Migration 012_contact_verification on rows written before it (docs/login-lookups.md §5):
// exactly the contacts a top-level organization wrote into its direct sub-organizations'
// root users, never changed since, become verified; everything else keeps its state. Run on
// both engines against the real store: rows as an older version left them, then the
// migration's `up` (twice: it must be safe to re-run).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { up } from "../../src/store/migrations/012_contact_verification.ts";
import { newId } from "../../src/store/util.ts";
import { engines } from "../helpers/server.ts";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";

for (const spec of engines()) {
  describe(`migration 012_contact_verification [${spec.name}]`, { skip: spec.skip }, () => {
    let s: ScratchStore;
    before(async () => (s = await scratchStore(spec.name)));
    after(async () => s?.cleanup());

    it("vouches for backend-written root users' contacts only; idempotent", async () => {
      const db = s.store.db;
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
      const user = async (
        organizationId: string,
        created: number,
        over: { updated?: number; email?: string; phone?: string; emailAt?: number; phoneAt?: number } = {},
      ) => {
        const id = newId();
        await db
          .insertInto("users")
          .values({
            id,
            organization_id: organizationId,
            name: id,
            email: over.email ?? null,
            email_normalized: over.email?.toLowerCase() ?? null,
            phone: over.phone ?? null,
            email_verified_at: over.emailAt ?? null,
            phone_verified_at: over.phoneAt ?? null,
            created_at: created,
            updated_at: over.updated ?? created,
          })
          .execute();
        return id;
      };
      const top = s.orgId; // top-level, created at 1
      const backendOrg = await org(top, 100);
      const backendMade = await user(backendOrg, 100, { email: "A@example.com", phone: "+14155550101" });
      // A second root user of the same sign-up: the statement must judge it on the rows as they were.
      const coRoot = await user(backendOrg, 100, { phone: "+14155550103" });
      const changedLater = await user(await org(top, 200), 200, { email: "b@example.com", updated: 300 });
      const addedLater = await user(await org(top, 400), 450, { email: "c@example.com" });
      const tenantOrg = await org(top, 500);
      const nested = await user(await org(tenantOrg, 600), 600, { email: "d@example.com" });
      const signupOrg = await org(top, 700);
      const signedUp = await user(signupOrg, 700, { email: "e@example.com", phone: "+14155550102", emailAt: 700 });
      const topUser = await user(top, 1, { email: "f@example.com" });
      const provedEarlier = await user(await org(top, 800), 800, { email: "g@example.com", updated: 900, emailAt: 900 });

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
      assert.deepEqual(await state(backendMade), [100, 100]);
      assert.deepEqual(await state(coRoot), [null, 100]);
      assert.deepEqual(await state(changedLater), [null, null]);
      assert.deepEqual(await state(addedLater), [null, null]);
      assert.deepEqual(await state(nested), [null, null]);
      assert.deepEqual(await state(signedUp), [700, null]);
      assert.deepEqual(await state(topUser), [null, null]);
      assert.deepEqual(await state(provedEarlier), [900, null]);
    });
  });
}
