// Rows named by id and organization are looked up by id alone and checked with ownedBy (see
// src/store/util.ts for why): a row of another organization must still never be returned,
// including after the statement has run often enough for PostgreSQL to switch to a generic plan.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { engines } from "../helpers/server.ts";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";
import { findUser } from "../../src/store/users.ts";
import { findWallet } from "../../src/store/wallets.ts";
import { newId } from "../../src/store/util.ts";

for (const engine of engines()) {
  describe(`look-ups by id within an organization [${engine.name}]`, { skip: engine.skip }, () => {
    let scratch: ScratchStore;
    let other: string;
    let userId: string;
    let walletId: string;

    before(async () => {
      scratch = await scratchStore(engine.name);
      const { store, orgId } = scratch;
      other = newId();
      await store.db
        .insertInto("organizations")
        .values({
          id: other,
          name: "other",
          parent_id: null,
          root_quorum_threshold: 1,
          policy_version: 0,
          settings: "{}",
          created_at: 1,
          updated_at: 1,
        })
        .execute();
      userId = newId();
      await store.db
        .insertInto("users")
        .values({
          id: userId,
          organization_id: orgId,
          name: "u",
          email: null,
          email_normalized: null,
          phone: null,
          created_at: 1,
          updated_at: 1,
        })
        .execute();
      walletId = newId();
      await store.db
        .insertInto("wallets")
        .values({
          id: walletId,
          organization_id: orgId,
          name: "w",
          seed_sealed: "x",
          mnemonic_length: 12,
          exported: 0,
          imported: 0,
          created_at: 1,
          updated_at: 1,
        })
        .execute();
    });
    after(async () => scratch?.cleanup());

    it("finds the row in its organization and nothing from another, however often it is asked", async () => {
      const { store, orgId } = scratch;
      for (let i = 0; i < 8; i++) {
        assert.equal((await findUser(store.db, orgId, userId))?.id, userId);
        assert.equal(await findUser(store.db, other, userId), undefined);
        assert.equal((await findWallet(store.db, orgId, walletId))?.id, walletId);
        assert.equal(await findWallet(store.db, other, walletId), undefined);
      }
      assert.equal(await findUser(store.db, orgId, newId()), undefined);
    });
  });
}
