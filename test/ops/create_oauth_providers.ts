// create_oauth_providers V2 (docs/oauth.md §6.1): OIDC identities attached to users — tokens
// verified in full (no nonce), claims backed by a token of the same person, one identity once
// across the service (also under a race), parents refused, only (iss, aud, sub) stored.
import { after, it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  completed,
  failsWith,
  forbidden,
  invalidRequest,
  notFound,
  perEngine,
  type Creds,
  type Harness,
  type Json,
  type Res,
} from "../helpers/inproc.ts";
import { loginsTrusting, sigilToken, startIssuer, type FakeIssuer } from "../helpers/oidc-tokens.ts";
import { DEFAULT_OAUTH_SETTINGS } from "../../src/logins/oauth/configure.ts";
import { newId } from "../../src/store/util.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { createUsersV4 } from "../../src/activities/users/create_users.ts";

const TYPE = "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2";
const RESULT = "createOauthProvidersResultV2";
const issuers: FakeIssuer[] = [];
let google: FakeIssuer;
after(async () => {
  for (const i of issuers) await i.close();
});

const create = (h: Harness, userId: string, oauthProviders: Json[], as?: Creds, organizationId?: string): Promise<Res> =>
  h.submit(
    "create_oauth_providers",
    TYPE,
    { userId, oauthProviders },
    { ...(as ? { as } : {}), ...(organizationId ? { organizationId } : {}) },
  );

const alreadyExists = (res: Res) => failsWith(res, 409, 6, "OAUTH_PROVIDER_ALREADY_EXISTS", /already attached/);

perEngine(
  "create_oauth_providers",
  (h) => {
    it("attaches a Sigil-issued identity through the official SDK (no nonce needed); get_user and get_oauth_providers list it", async () => {
      const [user] = await addUsersWithKeys(h(), 1);
      const sub = `x:${newId()}`;
      const token = await sigilToken(h(), { sub, aud: "x-client" });
      const sdk = await h().sdk();
      const { providerIds } = await sdk.createOauthProviders({
        userId: user!.userId,
        oauthProviders: [{ providerName: "X", oidcToken: token }],
      });
      assert.equal(providerIds.length, 1);
      const got = await h().query("get_user", { userId: user!.userId });
      assert.equal(got.status, 200, JSON.stringify(got.json));
      const [p] = got.json.user.oauthProviders as Json[];
      assert.deepEqual(
        { ...p, createdAt: undefined, updatedAt: undefined },
        {
          providerId: providerIds[0],
          providerName: "X",
          issuer: DEFAULT_OAUTH_SETTINGS.publicUrl,
          audience: "x-client",
          subject: sub,
          createdAt: undefined,
          updatedAt: undefined,
        },
      );
      assert.match(p!.createdAt.seconds, /^\d+$/);
      // Only the identity is stored, never the token.
      const rows = await h().service.store.db.selectFrom("oauth_providers").selectAll().where("user_id", "=", user!.userId).execute();
      assert.equal(rows.length, 1);
      assert.ok(!JSON.stringify(rows).includes(token.split(".")[2]!));
    });

    it("oidcClaims add another audience of the same person, backed by the token in the request", async () => {
      const [user] = await addUsersWithKeys(h(), 1);
      const sub = `g-${newId()}`;
      const token = await google.sign({ sub, aud: "web" });
      const r = completed(
        await create(h(), user!.userId, [
          { providerName: "google", oidcToken: token },
          { providerName: "google-ios", oidcClaims: { iss: google.issuer, sub, aud: "ios" } },
        ]),
        RESULT,
      );
      assert.equal((r.providerIds as string[]).length, 2);
      const list = await h().query("get_oauth_providers", { userId: user!.userId });
      assert.deepEqual((list.json.oauthProviders as Json[]).map((p) => p.audience).sort(), ["ios", "web"]);
    });

    it("claims only from a top-level organization's credential: a sub-organization's user gets 403 and nothing is attached; what vouched is recorded", async () => {
      const key = generateP256KeyPair();
      const res = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: `claims-${newId().slice(0, 6)}`,
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: "u",
            apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
      });
      const sub = completed(res, "createSubOrganizationResultV8");
      const subUser: Creds = { organizationId: sub.subOrganizationId, userId: sub.rootUserIds[0], key };
      const victim = `g-${newId()}`;
      // A genuine token with the victim's subject, for the attacker's own client id.
      const evil = await google.sign({ sub: victim, aud: "evil-app" });
      failsWith(
        await create(
          h(),
          subUser.userId,
          [
            { providerName: "evil", oidcToken: evil },
            { providerName: "victim", oidcClaims: { iss: google.issuer, sub: victim, aud: "victim-app" } },
          ],
          subUser,
          sub.subOrganizationId,
        ),
        403,
        7,
        "REQUEST_NOT_AUTHORIZED",
        /top-level organization/,
        ["parameters.oauthProviders[1].oidcClaims"],
      );
      const none = await h().service.store.db.selectFrom("oauth_providers").select("id").where("subject", "=", victim).execute();
      assert.equal(none.length, 0, "nothing attached, not even the token entry");
      // The same request from the top-level organization's credential is the backend vouching.
      const [user] = await addUsersWithKeys(h(), 1);
      completed(
        await create(h(), user!.userId, [
          { providerName: "web", oidcToken: await google.sign({ sub: victim, aud: "web" }) },
          { providerName: "ios", oidcClaims: { iss: google.issuer, sub: victim, aud: "ios" } },
        ]),
        RESULT,
      );
      const rows = await h()
        .service.store.db.selectFrom("oauth_providers")
        .select(["audience", "vouched_by"])
        .where("subject", "=", victim)
        .orderBy("audience")
        .execute();
      assert.deepEqual(rows, [
        { audience: "ios", vouched_by: "OIDC_CLAIMS" },
        { audience: "web", vouched_by: "OIDC_TOKEN" },
      ]);
    });

    it("refused: claims without a backing token, an entry with both or neither, too many entries", async () => {
      const [user] = await addUsersWithKeys(h(), 1);
      const token = await google.sign({ sub: "someone", aud: "web" });
      invalidRequest(
        await create(h(), user!.userId, [
          { providerName: "g", oidcClaims: { iss: google.issuer, sub: "other", aud: "ios" } },
          { providerName: "g", oidcToken: token },
        ]),
        /backed by an oidcToken/,
        ["parameters.oauthProviders[0].oidcClaims"],
      );
      invalidRequest(
        await create(h(), user!.userId, [{ providerName: "g", oidcClaims: { iss: google.issuer, sub: "someone", aud: "ios" } }]),
        /backed by an oidcToken/,
      );
      invalidRequest(
        await create(h(), user!.userId, [
          { providerName: "g", oidcToken: token, oidcClaims: { iss: google.issuer, sub: "someone", aud: "x" } },
        ]),
        /exactly one of/,
        ["parameters.oauthProviders[0]"],
      );
      invalidRequest(await create(h(), user!.userId, [{ providerName: "g" }]), /exactly one of/);
      invalidRequest(await create(h(), user!.userId, []));
      const rows = await h().service.store.db.selectFrom("oauth_providers").select("id").where("user_id", "=", user!.userId).execute();
      assert.equal(rows.length, 0);
    });

    it("abuse: expired, untrusted issuer, bad signature — 400 INVALID_OIDC_TOKEN naming the entry", async () => {
      const [user] = await addUsersWithKeys(h(), 1);
      const evil = await startIssuer("https://evil.example");
      issuers.push(evil);
      const cases: [Json[], RegExp][] = [
        [[{ providerName: "x", oidcToken: await sigilToken(h(), { ttl: -600 }) }], /expired/],
        [[{ providerName: "x", oidcToken: await evil.sign({}) }], /not trusted/],
        [[{ providerName: "x", oidcToken: await google.sign({}, { key: "stranger" }) }], /signature/],
      ];
      for (const [entries, message] of cases) {
        failsWith(await create(h(), user!.userId, entries), 400, 3, "INVALID_OIDC_TOKEN", message, [
          "parameters.oauthProviders[0].oidcToken",
        ]);
      }
      assert.equal(evil.requests, 0);
    });

    it("one identity once across the service: second attach 409, also within one request and across organizations", async () => {
      const [a, b] = await addUsersWithKeys(h(), 2);
      const sub = `x:${newId()}`;
      completed(await create(h(), a!.userId, [{ providerName: "x", oidcToken: await sigilToken(h(), { sub, aud: "c" }) }]), RESULT);
      alreadyExists(await create(h(), b!.userId, [{ providerName: "x", oidcToken: await sigilToken(h(), { sub, aud: "c" }) }]));
      alreadyExists(await create(h(), a!.userId, [{ providerName: "x", oidcToken: await sigilToken(h(), { sub, aud: "c" }) }]));
      const t = await sigilToken(h(), { sub: `x:${newId()}`, aud: "c" });
      alreadyExists(
        await create(h(), b!.userId, [
          { providerName: "x", oidcToken: t },
          { providerName: "x2", oidcToken: t },
        ]),
      );
      const other = await h().newOrg("other-providers");
      alreadyExists(await create(h(), other.userId, [{ providerName: "x", oidcToken: await sigilToken(h(), { sub, aud: "c" }) }], other));
      const rows = await h()
        .service.store.db.selectFrom("oauth_providers")
        .select("id")
        .where("user_id", "in", [b!.userId, other.userId])
        .execute();
      assert.equal(rows.length, 0, "nothing attached by a refused request");
    });

    it("two requests racing to attach one identity: exactly one wins, the other is 409", async () => {
      const users = await addUsersWithKeys(h(), 4);
      const sub = `x:${newId()}`;
      const token = await sigilToken(h(), { sub, aud: "race" });
      const results = await Promise.all(users.map((u) => create(h(), u.userId, [{ providerName: "x", oidcToken: token }])));
      assert.equal(results.filter((r) => r.status === 200).length, 1, JSON.stringify(results.map((r) => r.status)));
      for (const r of results.filter((x) => x.status !== 200)) alreadyExists(r);
      const rows = await h().service.store.db.selectFrom("oauth_providers").select("id").where("subject", "=", sub).execute();
      assert.equal(rows.length, 1);
    });

    it("a parent cannot add providers to a sub-organization's user (403); an unknown user is 404", async () => {
      const res = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: `sub-${newId().slice(0, 6)}`,
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "s", userEmail: "s@example.com", apiKeys: [], authenticators: [], oauthProviders: [] }],
      });
      const sub = completed(res, "createSubOrganizationResultV8");
      const token = await google.sign({ email: "s@example.com", email_verified: true });
      forbidden(
        await create(h(), sub.rootUserIds[0], [{ providerName: "google", oidcToken: token }], undefined, sub.subOrganizationId),
        /parent/,
      );
      notFound(await create(h(), newId(), [{ providerName: "google", oidcToken: token }]), /no user/);
    });

    it("Google social linking: a Google identity with the user's verified email marks the email verified", async () => {
      const email = `g-${newId().slice(0, 8)}@example.com`;
      const res = await h().submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", {
        users: [{ userName: "g", userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      });
      const [userId] = completed(res, createUsersV4).userIds;
      completed(
        await create(h(), userId!, [
          { providerName: "google", oidcToken: await google.sign({ email: email.toUpperCase(), email_verified: true }) },
        ]),
        RESULT,
      );
      const row = await h()
        .service.store.db.selectFrom("users")
        .select("email_verified_at")
        .where("id", "=", userId!)
        .executeTakeFirstOrThrow();
      assert.ok(row.email_verified_at, "email verified");
    });
  },
  undefined,
  async () => {
    google = await startIssuer("https://accounts.google.com");
    issuers.push(google);
    return { logins: loginsTrusting([google]) };
  },
);
