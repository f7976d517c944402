// The pieces every login flow stands on: service keys (rotation, discovery, sealing), the
// two JWT forms against @turnkey/crypto's own verifiers, "at most N" slots under concurrent
// PostgreSQL transactions, and credential resolution downward into sub-organizations.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { verifyOtpVerificationToken, verifySessionJwtSignature } from "@turnkey/crypto";
import { MasterKey } from "../../src/crypto/envelope.ts";
import {
  activeServiceKey,
  discoveryDocument,
  ensureServiceKeys,
  retireServiceKey,
  rotateServiceKeys,
  ServiceKeyCache,
  verifyingKeys,
} from "../../src/auth/service-keys.ts";
import { readVerificationToken, signSessionJwt, signVerificationToken } from "../../src/auth/tokens.ts";
import { sessionSeconds } from "../../src/activities/sessions/create-session.ts";
import { resolveHolder } from "../../src/auth/credential-scope.ts";
import { ChainCache } from "../../src/store/organizations.ts";
import { takeSlot, releaseSlots } from "../../src/store/slots.ts";
import { newId } from "../../src/store/util.ts";
import { ApiError } from "../../src/errors.ts";
import { engines } from "../helpers/server.ts";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";

for (const spec of engines()) {
  describe(`login foundation [${spec.name}]`, { skip: spec.skip }, () => {
    let s: ScratchStore;
    const master = MasterKey.generate();
    before(async () => {
      s = await scratchStore(spec.name);
    });
    after(async () => s?.cleanup());

    it("creates one key per purpose, publishes them, and the SDK verifies what they sign", async () => {
      const cache = new ServiceKeyCache();
      await ensureServiceKeys(cache, s.store.db, master);
      const doc = await discoveryDocument(s.store.db);
      assert.deepEqual(doc.keys.map((k) => k.purpose).sort(), [
        "BUNDLE_SIGNER",
        "OAUTH2_CLIENT_SECRET",
        "OIDC_TOKEN",
        "OTP_ENCRYPTION_TARGET",
        "SESSION_JWT",
        "VERIFICATION_TOKEN",
      ]);
      for (const k of doc.keys) assert.match(k.publicKey, /^04[0-9a-f]{128}$/);
      const sessionKey = await activeServiceKey(cache, s.store.db, master, "SESSION_JWT");
      const published = doc.keys.find((k) => k.purpose === "SESSION_JWT")!.publicKey;
      assert.equal(sessionKey.signer.publicUncompressed, published);
      const jwt = signSessionJwt(sessionKey, {
        exp: Math.floor(Date.now() / 1000) + 60,
        public_key: "02" + "11".repeat(32),
        session_type: "SESSION_TYPE_READ_WRITE",
        user_id: newId(),
        organization_id: newId(),
      });
      assert.equal(await verifySessionJwtSignature(jwt, published), true);
      // Another purpose's key does not verify it.
      assert.equal(await verifySessionJwtSignature(jwt, doc.keys.find((k) => k.purpose === "VERIFICATION_TOKEN")!.publicKey), false);

      const vKey = await activeServiceKey(cache, s.store.db, master, "VERIFICATION_TOKEN");
      const { token } = signVerificationToken(vKey, {
        exp: String(Date.now() + 60_000),
        organization_id: s.orgId,
        verification_type: "OTP_TYPE_EMAIL",
        contact: "a_b+c@example.com",
        public_key: "03" + "22".repeat(32),
      });
      const claims = await verifyOtpVerificationToken(token, vKey.signer.publicUncompressed);
      assert.equal(claims.contact, "a_b+c@example.com");
      assert.ok("claims" in readVerificationToken(token, [vKey.signer.publicUncompressed], Date.now()));
      assert.deepEqual(readVerificationToken(token, [vKey.signer.publicUncompressed], Date.now() + 61_000), {
        problem: "verification token has expired",
      });
      const [h, p, sig] = token.split(".");
      const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, contact: "x@example.com" })).toString("base64url")}.${sig}`;
      assert.deepEqual(readVerificationToken(forged, [vKey.signer.publicUncompressed], Date.now()), {
        problem: "invalid verification token signature",
      });
      assert.ok(p);
      // A header or payload that is JSON but not an object (null, an array) is malformed, not a crash.
      const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      for (const bad of [
        `${b64(null)}.${p}.${sig}`,
        `${h}.${b64(null)}.${sig}`,
        `${b64([])}.${p}.${sig}`,
        `${h}.${b64(["__proto__"])}.${sig}`,
      ]) {
        assert.deepEqual(readVerificationToken(bad, [vKey.signer.publicUncompressed], Date.now()), {
          problem: "malformed verification token",
        });
      }
    });

    it("rotation keeps the previous key published (it still verifies) until it is retired; private keys are sealed", async () => {
      const cache = new ServiceKeyCache();
      const before = await activeServiceKey(cache, s.store.db, master, "VERIFICATION_TOKEN");
      const [rotated] = await rotateServiceKeys(s.store.db, master, ["VERIFICATION_TOKEN"]);
      const after = await activeServiceKey(cache, s.store.db, master, "VERIFICATION_TOKEN");
      assert.equal(after.id, rotated!.keyId);
      assert.notEqual(after.id, before.id);
      const keys = await verifyingKeys(s.store.db, "VERIFICATION_TOKEN");
      assert.deepEqual(keys, [after.signer.publicUncompressed, before.signer.publicUncompressed]);
      await assert.rejects(retireServiceKey(s.store.db, after.id), /active service key/);
      await retireServiceKey(s.store.db, before.id);
      assert.deepEqual(await verifyingKeys(s.store.db, "VERIFICATION_TOKEN"), [after.signer.publicUncompressed]);
      const doc = await discoveryDocument(s.store.db);
      assert.ok(!doc.keys.some((k) => k.keyId === before.id));
      // At rest: sealed, and another master key cannot open it.
      const row = await s.store.db.selectFrom("service_keys").selectAll().where("id", "=", after.id).executeTakeFirstOrThrow();
      assert.match(row.private_key_sealed, /^sgl1\./);
      await assert.rejects(
        activeServiceKey(new ServiceKeyCache(), s.store.db, MasterKey.generate(), "VERIFICATION_TOKEN"),
        /another master key/,
      );
    });

    it("a limit of 3 slots admits exactly 3 of 12 concurrent takers, frees on expiry and on release", async () => {
      const scope = `t:${newId()}`;
      const now = Date.now();
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => s.store.transact((tx) => takeSlot(tx, scope, 3, `h${i}`, now + 60_000, now))),
      );
      assert.equal(results.filter(Boolean).length, 3);
      assert.equal(await s.store.transact((tx) => takeSlot(tx, scope, 3, "late", now + 60_000, now)), false);
      const holder = `h${results.indexOf(true)}`;
      await s.store.transact((tx) => releaseSlots(tx, scope, holder));
      assert.equal(await s.store.transact((tx) => takeSlot(tx, scope, 3, "after-release", now + 60_000, now)), true);
      // Past every slot's `until`, all are free again.
      assert.equal(await s.store.transact((tx) => takeSlot(tx, scope, 3, "later", now + 120_000, now + 61_000)), true);
      // A taker whose transaction fails gives the slot back.
      const scope2 = `t:${newId()}`;
      await assert.rejects(
        s.store.transact(async (tx) => {
          assert.equal(await takeSlot(tx, scope2, 1, "x", now + 60_000, now), true);
          throw new Error("rolled back");
        }),
        /rolled back/,
      );
      assert.equal(await s.store.transact((tx) => takeSlot(tx, scope2, 1, "y", now + 60_000, now)), true);
    });

    it("a large limit (40, claimed by hint) admits exactly 40 of 70 concurrent takers; expired and swept slots are taken again, never more than 40", async () => {
      const scope = `big:${newId()}`;
      const now = Date.now();
      const take = (holder: string, until: number, at: number) => s.store.transact((tx) => takeSlot(tx, scope, 40, holder, until, at));
      const results = await Promise.all(Array.from({ length: 70 }, (_, i) => take(`h${i}`, now + 60_000, now)));
      assert.equal(results.filter(Boolean).length, 40);
      const rows = () => s.store.db.selectFrom("limit_slots").select(["slot", "until", "holder"]).where("scope", "=", scope).execute();
      assert.deepEqual(
        (await rows()).map((r) => r.slot).sort((a, b) => a - b),
        Array.from({ length: 40 }, (_, i) => i),
      );
      assert.equal(await take("late", now + 60_000, now), false);
      // Swept rows (the sweeper deletes long-expired ones) leave gaps that are numbers like any other.
      await s.store.db.deleteFrom("limit_slots").where("scope", "=", scope).where("slot", "in", [0, 17, 39]).execute();
      const refill = await Promise.all(Array.from({ length: 6 }, (_, i) => take(`r${i}`, now + 60_000, now)));
      assert.equal(refill.filter(Boolean).length, 3);
      assert.equal((await rows()).length, 40);
      // Past every `until`, 40 more (and no 41st) in the same rows.
      const later = await Promise.all(Array.from({ length: 45 }, (_, i) => take(`l${i}`, now + 120_000, now + 61_000)));
      assert.equal(later.filter(Boolean).length, 40);
      const after = await rows();
      assert.equal(after.length, 40);
      assert.ok(after.every((r) => r.holder.startsWith("l") && Number(r.until) === now + 120_000));
    });

    it("resolves a credential downward to the one sub-organization holding it, and refuses two", async () => {
      const db = s.store.db;
      const org = (id: string, parent: string | null) =>
        db
          .insertInto("organizations")
          .values({
            id,
            name: id,
            parent_id: parent,
            root_quorum_threshold: 1,
            policy_version: 0,
            settings: "{}",
            created_at: 1,
            updated_at: 1,
          })
          .execute();
      const parent = newId(),
        childA = newId(),
        childB = newId(),
        grandchild = newId(),
        unrelated = newId();
      await org(parent, null);
      await org(childA, parent);
      await org(childB, parent);
      await org(grandchild, childA);
      await org(unrelated, null);
      const chains = new ChainCache();
      const holders =
        (...orgs: string[]) =>
        async () =>
          orgs.map((o) => ({ organization_id: o }));
      // Up: the nearest holder in the chain wins, and is acted on from the target.
      const up = await resolveHolder(db, childA, "then-descendants", holders(parent, grandchild), chains);
      assert.deepEqual(up, { holder: { organization_id: parent }, fromAncestor: true, organizationId: childA });
      // Down: a unique holder below the target; the request acts in the holder's organization.
      const down = await resolveHolder(db, parent, "then-descendants", holders(grandchild, unrelated), chains);
      assert.deepEqual(down, { holder: { organization_id: grandchild }, fromAncestor: false, organizationId: grandchild });
      // The default scope never looks down.
      assert.equal(await resolveHolder(db, parent, "target-then-ancestors", holders(grandchild), chains), undefined);
      // Two holders below: CREDENTIAL_CONFLICT.
      await assert.rejects(
        resolveHolder(db, parent, "then-descendants", holders(childA, childB), chains, "a credential ID"),
        (e: unknown) => {
          assert.ok(e instanceof ApiError);
          assert.equal(e.category, "CREDENTIAL_CONFLICT");
          assert.match(e.message, /more than one suborg associated with a credential ID/);
          return true;
        },
      );
      // An unknown target has no chain: nothing found, either way.
      assert.equal(await resolveHolder(db, newId(), "then-descendants", holders(grandchild), chains), undefined);
    });
  });
}

describe("session lengths", () => {
  it("default 900 s, 1 s up to the configured maximum, anything else is 400 naming the field", () => {
    assert.equal(sessionSeconds(undefined, 3600), 900);
    assert.equal(sessionSeconds("1", 3600), 1);
    assert.equal(sessionSeconds("3600", 3600), 3600);
    for (const bad of ["0", "3601", "-1", "1.5", "abc", "1e3", " 60"]) {
      assert.throws(
        () => sessionSeconds(bad, 3600),
        (e: unknown) => e instanceof ApiError && /expirationSeconds must be a whole number of seconds from 1 to 3600/.test(e.message),
        bad,
      );
    }
  });
});

for (const spec of engines()) {
  describe(`sweeping expired login records [${spec.name}]`, { skip: spec.skip }, () => {
    let s: ScratchStore;
    before(async () => {
      s = await scratchStore(spec.name);
    });
    after(async () => s?.cleanup());

    it("deletes OTPs, tokens, slots, session keys and import targets a day past expiry, and nothing younger or lasting", async () => {
      const { sweepExpired, SWEEP_GRACE_MS } = await import("../../src/store/sweeper.ts");
      const db = s.store.db;
      const now = Date.now();
      const old = now - SWEEP_GRACE_MS - 1000;
      const recent = now - 1000;
      const userId = newId();
      await db
        .insertInto("users")
        .values({
          id: userId,
          organization_id: s.orgId,
          name: "u",
          email: null,
          email_normalized: null,
          phone: null,
          created_at: 1,
          updated_at: 1,
        })
        .execute();
      const otp = (id: string, expires_at: number) => ({
        id,
        organization_id: s.orgId,
        otp_type: "OTP_TYPE_EMAIL" as const,
        contact: "a@b.c",
        contact_normalized: "a@b.c",
        code_digest: "x",
        target_private_key_sealed: "x",
        attempts: 0,
        status: "live" as const,
        user_identifier: null,
        expires_at,
        created_at: 1,
        updated_at: 1,
      });
      await db
        .insertInto("otps")
        .values([otp("otp-old", old), otp("otp-new", recent)])
        .execute();
      const token = (id: string, expires_at: number) => ({
        id,
        organization_id: s.orgId,
        otp_id: "x",
        verification_type: "OTP_TYPE_EMAIL" as const,
        contact: "a@b.c",
        public_key: "02",
        expires_at,
        signup_used_at: null,
        login_used_at: null,
        created_at: 1,
      });
      await db
        .insertInto("verification_tokens")
        .values([token("t-old", old), token("t-new", recent)])
        .execute();
      await db
        .insertInto("limit_slots")
        .values([
          { scope: "s", slot: 0, until: old, holder: "h" },
          { scope: "s", slot: 1, until: recent, holder: "h" },
        ])
        .execute();
      const key = (id: string, credential_type: "CREDENTIAL_TYPE_LOGIN" | "CREDENTIAL_TYPE_API_KEY_P256", expires_at: number | null) => ({
        id,
        organization_id: s.orgId,
        user_id: userId,
        name: id,
        public_key: id,
        public_key_normalized: id,
        curve: "API_KEY_CURVE_P256" as const,
        credential_type,
        expiration_seconds: null,
        expires_at,
        created_at: 1,
        updated_at: 1,
      });
      await db
        .insertInto("api_keys")
        .values([
          key("session-old", "CREDENTIAL_TYPE_LOGIN", old),
          key("session-new", "CREDENTIAL_TYPE_LOGIN", recent),
          key("apikey-old", "CREDENTIAL_TYPE_API_KEY_P256", old),
          key("apikey-lasting", "CREDENTIAL_TYPE_API_KEY_P256", null),
        ])
        .execute();
      const target = (id: string, expires_at: number) => ({
        id,
        organization_id: s.orgId,
        user_id: `${userId}-${id}`,
        kind: "WALLET",
        public_key: "04",
        private_key_sealed: "x",
        expires_at,
        created_at: 1,
      });
      await db
        .insertInto("import_targets")
        .values([target("imt-old", old), target("imt-new", recent)])
        .execute();
      const swept = await s.store.transact((tx) => sweepExpired(tx, now));
      assert.deepEqual(swept, { otps: 1, verificationTokens: 1, limitSlots: 1, sessionKeys: 1, importTargets: 1 });
      assert.deepEqual(
        (await db.selectFrom("import_targets").select("id").execute()).map((r) => r.id),
        ["imt-new"],
      );
      assert.deepEqual(
        (await db.selectFrom("otps").select("id").execute()).map((r) => r.id),
        ["otp-new"],
      );
      assert.deepEqual(
        (await db.selectFrom("verification_tokens").select("id").execute()).map((r) => r.id),
        ["t-new"],
      );
      assert.deepEqual(
        (await db.selectFrom("api_keys").select("id").orderBy("id").execute()).map((r) => r.id),
        ["apikey-lasting", "apikey-old", "session-new"],
      );
    });
  });
}
