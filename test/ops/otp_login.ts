import { after, it } from "node:test";
import assert from "node:assert/strict";
import { verifySessionJwtSignature } from "@turnkey/crypto";
import { completed, invalidRequest, notFound, perEngine, userParams, type Creds, type Harness } from "../helpers/inproc.ts";
import { publishedKey, sinkPerHarness, verifiedToken } from "../helpers/smtp-sink.ts";
import { clientSignature, mintVerificationToken } from "../helpers/tokens.ts";
import { generateP256, type P256Private } from "../../src/crypto/p256.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { createSubOrganizationV8 } from "../../src/activities/organizations/create_sub_organization.ts";
import { otpLoginV2 } from "../../src/activities/otp/otp_login.ts";
import { createUsersV4 } from "../../src/activities/users/create_users.ts";

const OP = "otp_login";
const V2 = "ACTIVITY_TYPE_OTP_LOGIN_V2";
let n = 0;
const fresh = () => `login${++n}-${Date.now()}@example.com`;

const tokenId = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")).id as string;
/** What core sends: the login usage signed by the token's key. */
const loginParams = (token: string, tokenKey: P256Private, sessionPublicKey: string, over: Record<string, unknown> = {}) => ({
  verificationToken: token,
  publicKey: sessionPublicKey,
  clientSignature: clientSignature(tokenKey, { login: { publicKey: sessionPublicKey }, tokenId: tokenId(token), type: "USAGE_TYPE_LOGIN" }),
  ...over,
});

async function userWithEmail(h: Harness, email: string, as?: Creds): Promise<string> {
  const res = await h.submit(
    "create_users",
    "ACTIVITY_TYPE_CREATE_USERS_V4",
    { users: [userParams({ userEmail: email })] },
    as ? { as } : {},
  );
  return completed(res, createUsersV4).userIds[0] as string;
}
async function sessionKeys(h: Harness, userId: string): Promise<number> {
  const r = await h.service.store.db
    .selectFrom("api_keys")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("user_id", "=", userId)
    .where("credential_type", "=", "CREDENTIAL_TYPE_LOGIN")
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const s = sinkPerHarness();
perEngine(
  "otp_login",
  (h) => {
    after(s.stop);

    it("V2: logs in the user with the verified email (any case); the session JWT verifies and its key stamps requests", async () => {
      const email = fresh();
      const userId = await userWithEmail(h(), email);
      const { token, key } = await verifiedToken(h(), s.sink(), email.toUpperCase());
      const session = generateP256KeyPair();
      const res = await h().submit(OP, V2, loginParams(token, key, session.publicKey, { expirationSeconds: "120" }));
      const jwt = completed(res, otpLoginV2).session;
      assert.ok(await verifySessionJwtSignature(jwt, await publishedKey(h(), "SESSION_JWT")));
      const claims = JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8"));
      assert.equal(claims.user_id, userId);
      assert.equal(claims.organization_id, h().root.organizationId);
      assert.equal(claims.public_key, session.publicKey);
      assert.ok(Math.abs(claims.exp - (Date.now() / 1000 + 120)) < 10);
      const who = await h().query("whoami", {}, { as: { organizationId: h().root.organizationId, userId, key: session } });
      assert.equal(who.status, 200, JSON.stringify(who.json));
      assert.equal(who.json.userId, userId);
      // The consumed token proved the email (swagger: "verification status … updated when the token is consumed").
      const row = await h()
        .service.store.db.selectFrom("users")
        .select(["email_verified_at"])
        .where("id", "=", userId)
        .executeTakeFirstOrThrow();
      assert.ok(Number(row.email_verified_at) > 0);
    });

    it("a token logs in once: the second login with it is refused and creates no session", async () => {
      const email = fresh();
      const userId = await userWithEmail(h(), email);
      const { token, key } = await verifiedToken(h(), s.sink(), email);
      completed(await h().submit(OP, V2, loginParams(token, key, generateP256KeyPair().publicKey)), otpLoginV2);
      invalidRequest(await h().submit(OP, V2, loginParams(token, key, generateP256KeyPair().publicKey)), /already been used to log in/, [
        "parameters.verificationToken",
      ]);
      assert.equal(await sessionKeys(h(), userId), 1);
    });

    it("refuses a client signature by another key, one over another session key, and a login without one (V1 too)", async () => {
      const email = fresh();
      const userId = await userWithEmail(h(), email);
      const { token, key } = await verifiedToken(h(), s.sink(), email);
      const sessionKey = generateP256KeyPair().publicKey;
      invalidRequest(await h().submit(OP, V2, loginParams(token, generateP256(), sessionKey)), /bound to/, ["parameters.clientSignature"]);
      const other = loginParams(token, key, generateP256KeyPair().publicKey);
      invalidRequest(await h().submit(OP, V2, { ...other, publicKey: sessionKey }), /login\.publicKey/, ["parameters.clientSignature"]);
      const forged = loginParams(token, key, sessionKey);
      forged.clientSignature.signature = loginParams(token, key, generateP256KeyPair().publicKey).clientSignature.signature;
      invalidRequest(await h().submit(OP, V2, forged), /invalid client signature/);
      invalidRequest(
        await h().submit(OP, "ACTIVITY_TYPE_OTP_LOGIN", { verificationToken: token, publicKey: sessionKey }),
        /clientSignature/,
        ["parameters.clientSignature"],
      );
      assert.equal(await sessionKeys(h(), userId), 0, "no session created");
      // The token was not used up by the refusals: V1 with the signature works.
      completed(await h().submit(OP, "ACTIVITY_TYPE_OTP_LOGIN", loginParams(token, key, sessionKey)), otpLoginV2);
      assert.equal(await sessionKeys(h(), userId), 1);
    });

    it("a token for a contact no user has is 404; a token from another organization or a garbage token is 400", async () => {
      const { token, key } = await verifiedToken(h(), s.sink(), fresh());
      notFound(await h().submit(OP, V2, loginParams(token, key, generateP256KeyPair().publicKey)), /no user with the verified email/);
      const other = await h().newOrg("Other");
      const email = fresh();
      await userWithEmail(h(), email, other);
      const foreign = await mintVerificationToken(h(), { contact: email });
      invalidRequest(
        await h().submit(OP, V2, loginParams(foreign.token, foreign.key, generateP256KeyPair().publicKey), { as: other }),
        /not .* or one of its parents/,
      );
      const garbage = { ...loginParams(foreign.token, foreign.key, generateP256KeyPair().publicKey), verificationToken: "a.b.c" };
      invalidRequest(await h().submit(OP, V2, garbage), /verificationToken/, ["parameters.verificationToken"]);
    });

    it("a token for one contact does not log in another user; invalidateExisting revokes the earlier sessions", async () => {
      const [a, b] = [fresh(), fresh()];
      const userA = await userWithEmail(h(), a);
      await userWithEmail(h(), b);
      const first = await verifiedToken(h(), s.sink(), a);
      const s1 = generateP256KeyPair();
      completed(await h().submit(OP, V2, loginParams(first.token, first.key, s1.publicKey)), otpLoginV2);
      const second = await verifiedToken(h(), s.sink(), a);
      const s2 = generateP256KeyPair();
      const jwt = completed(
        await h().submit(OP, V2, loginParams(second.token, second.key, s2.publicKey, { invalidateExisting: true })),
        otpLoginV2,
      ).session;
      assert.equal(JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()).user_id, userA);
      const asSession = (key: typeof s1) => ({ organizationId: h().root.organizationId, userId: userA, key });
      const revoked = await h().query("whoami", {}, { as: asSession(s1) });
      assert.equal(revoked.status, 401, JSON.stringify(revoked.json));
      assert.match(revoked.json.message, /could not find public key in organization or its parent organization/);
      assert.equal((await h().query("whoami", {}, { as: asSession(s2) })).status, 200);
    });

    it("a parent's API key runs the whole flow for a sub-organization's user, whose session lives in the sub-organization", async () => {
      const email = fresh();
      const sub = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: "login-child",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "c", userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
      });
      const subId = completed(sub, createSubOrganizationV8).subOrganizationId;
      const { token, key } = await verifiedToken(h(), s.sink(), email, { organizationId: subId });
      const session = generateP256KeyPair();
      const jwt = completed(
        await h().submit(OP, V2, loginParams(token, key, session.publicKey), { organizationId: subId }),
        otpLoginV2,
      ).session;
      const claims = JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());
      assert.equal(claims.organization_id, subId);
      const who = await h().query("whoami", {}, { as: { organizationId: subId, userId: claims.user_id, key: session } });
      assert.equal(who.status, 200, JSON.stringify(who.json));
      assert.equal(who.json.organizationId, subId);
    });
  },
  undefined,
  s.options,
);
