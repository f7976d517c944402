// OIDC token verification (logins/oauth/verify-oidc.ts) and the nonce binding (nonce.ts), on a
// scratch store (Sigil's own OIDC_TOKEN keys) and a trusted issuer's JWKS served on loopback.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { SignJWT } from "jose";
import { verifyOidcToken, OidcTokenProblem, singleAudience } from "../../src/logins/oauth/verify-oidc.ts";
import { nonceFor, nonceMatches, nonceProblem } from "../../src/logins/oauth/nonce.ts";
import { generateP256 } from "../../src/crypto/p256.ts";
import { scratchStore, type ScratchStore } from "../helpers/store.ts";
import { oauthSettings, startIssuer, type FakeIssuer } from "../helpers/oidc-tokens.ts";

const SIGIL = "https://sigil.test";

describe("nonce binding (docs/oauth.md §4.3)", () => {
  it("is sha256 hex of the public key's hex text (the docs' example)", () => {
    const key = "0394e549c71fa99dd5cf752fba623090be314949b74e4cdf7ca72031dd638e281a";
    assert.equal(nonceFor(key), "1663bba492a323085b13895634a3618792c4ec6896f3c34ef3c26396df22ef82");
    assert.ok(nonceMatches({ nonce: nonceFor(key) }, key));
    assert.ok(nonceMatches({ tknonce: nonceFor(key) }, key.toUpperCase()), "tknonce, key sent upper-cased");
    assert.ok(!nonceMatches({ nonce: nonceFor(key) }, "02" + key.slice(2)));
    assert.match(nonceProblem({}, key)!, /no nonce/);
    assert.match(nonceProblem({ nonce: "00".repeat(32) }, key)!, /nonce mismatch/);
  });
});

describe("verifyOidcToken", () => {
  let s: ScratchStore;
  let issuer: FakeIssuer;
  let untrusted: FakeIssuer;
  const own = generateP256();
  const kid = "svk_test_oidc";

  before(async () => {
    s = await scratchStore("sqlite");
    await s.store.db
      .insertInto("service_keys")
      .values({
        id: kid,
        purpose: "OIDC_TOKEN",
        public_key: own.publicUncompressed,
        private_key_sealed: "unused",
        status: "active",
        created_at: 1,
        updated_at: 1,
      })
      .execute();
    issuer = await startIssuer("https://trusted.example");
    untrusted = await startIssuer("https://untrusted.example");
  });
  after(async () => {
    await issuer.close();
    await untrusted.close();
    await s.cleanup();
  });

  const settings = () => oauthSettings([issuer], { publicUrl: SIGIL });
  const verify = (token: string, opts: { audiences?: string[]; now?: number } = {}) =>
    verifyOidcToken(s.store.db, token, settings(), {
      now: opts.now ?? Date.now(),
      ...(opts.audiences ? { audiences: opts.audiences } : {}),
    });
  const ownToken = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: SIGIL, aud: "c1", sub: "x:1", iat: now, exp: now + 600, ...claims })
      .setProtectedHeader({ alg: "ES256", typ: "JWT", kid, ...header })
      .sign(own.key);
  };
  const rejects = async (token: string | Promise<string>, pattern: RegExp, opts?: { audiences?: string[]; now?: number }) => {
    await assert.rejects(verify(await token, opts), (err: unknown) => {
      assert.ok(err instanceof OidcTokenProblem, String(err));
      assert.match(err.message, pattern);
      return true;
    });
  };

  it("Sigil's own token verifies with its database key (no HTTP), claims returned", async () => {
    const nonce = nonceFor("02".padEnd(66, "a"));
    const id = await verify(await ownToken({ nonce, email: "a@b.co", email_verified: true }));
    assert.deepEqual(id, { iss: SIGIL, sub: "x:1", aud: ["c1"], nonce, email: "a@b.co", email_verified: true, exp: id.exp });
    // A trailing slash on iss names the same issuer.
    assert.equal((await verify(await ownToken({ iss: `${SIGIL}/` }))).sub, "x:1");
  });

  it("a trusted issuer's token verifies through its JWKS, fetched once and cached", async () => {
    const before = issuer.requests;
    const id = await verify(await issuer.sign({ sub: "g-1", aud: ["c2"], tknonce: "abc" }));
    assert.deepEqual([id.iss, id.sub, id.aud, id.tknonce], ["https://trusted.example", "g-1", ["c2"], "abc"]);
    await verify(await issuer.sign({ sub: "g-2" }));
    assert.equal(issuer.requests - before, 1, "the key set is cached per store");
  });

  it("an untrusted issuer is refused and its JWKS never fetched", async () => {
    await rejects(untrusted.sign({}), /issuer "https:\/\/untrusted.example" is not trusted/);
    assert.equal(untrusted.requests, 0);
  });

  it("expired (beyond the leeway) is refused; within the leeway accepted", async () => {
    await rejects(ownToken({ exp: Math.floor(Date.now() / 1000) - 120 }), /expired/);
    await rejects(issuer.sign({ ttl: -3600 }), /expired/);
    assert.ok(await verify(await ownToken({ exp: Math.floor(Date.now() / 1000) - 10 })));
  });

  it("audience mismatch (when an audience is required)", async () => {
    await rejects(ownToken({ aud: "c1" }), /aud/, { audiences: ["other"] });
    assert.ok(await verify(await ownToken({ aud: ["z", "c1"] }), { audiences: ["c1"] }));
  });

  it("bad signature: a stranger's key, a tampered payload, an unknown kid", async () => {
    await rejects(issuer.sign({}, { key: "stranger" }), /signature verification failed/);
    const good = await ownToken({});
    const [h, , sig] = good.split(".");
    const forged = Buffer.from(
      JSON.stringify({ iss: SIGIL, aud: "c1", sub: "x:other", exp: Math.floor(Date.now() / 1000) + 600 }),
    ).toString("base64url");
    await rejects(`${h}.${forged}.${sig}`, /signature verification failed/);
    const stranger = generateP256();
    const strangerToken = await new SignJWT({ iss: SIGIL, aud: "c1", sub: "x:1", exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: "ES256", kid })
      .sign(stranger.key);
    await rejects(strangerToken, /signature verification failed/);
    await rejects(ownToken({}, { kid: "svk_nope" }), /unknown key/);
  });

  it("alg none and HMAC are refused", async () => {
    await rejects(issuer.sign({}, { alg: "none" }), /alg none|unsigned/);
    const hs = await new SignJWT({ iss: "https://trusted.example", aud: "c1", sub: "s", exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode("k".repeat(32)));
    await rejects(hs, /algorithm/);
  });

  it("missing claims: iss, sub, aud, exp; garbage", async () => {
    await rejects(issuer.sign({ omit: ["sub"] }), /sub/);
    await rejects(issuer.sign({ omit: ["aud"] }), /aud/);
    await rejects(issuer.sign({ omit: ["exp"] }), /exp/);
    await rejects(issuer.sign({ omit: ["iss"] }), /no iss/);
    await rejects(ownToken({ sub: "" }), /sub/);
    await rejects("not-a-jwt", /malformed/);
    await rejects("a.b.c", /malformed/);
    await rejects("", /must be set/);
  });

  it("a trusted issuer whose JWKS hangs is answered within the timeout, as a problem with the token's keys", async () => {
    const sockets = new Set<import("node:net").Socket>();
    const hanging = http.createServer(() => {
      /* never answers */
    });
    hanging.on("connection", (c) => sockets.add(c));
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    try {
      const port = (hanging.address() as import("node:net").AddressInfo).port;
      const slow = { ...issuer, jwksUrl: `http://127.0.0.1:${port}/jwks` };
      const started = Date.now();
      await assert.rejects(
        verifyOidcToken(s.store.db, await issuer.sign({}), oauthSettings([slow], { publicUrl: SIGIL, timeoutMs: 300 }), {
          now: Date.now(),
        }),
        /could not be fetched in time/,
      );
      assert.ok(Date.now() - started < 2000, `answered after ${Date.now() - started} ms`);
    } finally {
      for (const c of sockets) c.destroy();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });

  it("no settings: nothing is trusted", async () => {
    await assert.rejects(verifyOidcToken(s.store.db, await ownToken({}), undefined, { now: Date.now() }), /not trusted/);
  });

  it("singleAudience: the only audience, or azp among several", () => {
    const base = { iss: "i", sub: "s", exp: 1 };
    assert.equal(singleAudience({ ...base, aud: ["a"] }), "a");
    assert.equal(singleAudience({ ...base, aud: ["a", "b"], azp: "b" }), "b");
    assert.equal(singleAudience({ ...base, aud: ["a", "b"] }), undefined);
  });
});
