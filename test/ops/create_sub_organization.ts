import { it } from "node:test";
import assert from "node:assert/strict";
import {
  assertIdempotent,
  completed,
  conflict,
  forbidden,
  invalidRequest,
  onSqlite,
  precondition,
  publicKey,
  UUID,
  type Creds,
  type Json,
} from "../helpers/inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
// Verified sign-up (tokens minted in-process; the OTP flow itself is tested end to end elsewhere).
import { perEngine } from "../helpers/inproc.ts";
import { clientSignature, mintVerificationToken, type MintedToken } from "../helpers/tokens.ts";
import { generateP256, signP256 } from "../../src/crypto/p256.ts";
import { signupMismatches } from "../../src/activities/organizations/verified-signup.ts";

const OP = "create_sub_organization";
const V8 = "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8";
const rootUser = (over: Json = {}) => ({ userName: "r", apiKeys: [], authenticators: [], oauthProviders: [], ...over });
const params = (over: Json = {}) => ({ subOrganizationName: "sub", rootQuorumThreshold: 1, rootUsers: [rootUser()], ...over });

onSqlite("create_sub_organization", (h) => {
  it("creates a sub-organization whose root users can act in it", async () => {
    const key = generateP256KeyPair();
    const res = await h().submit(
      OP,
      V8,
      params({
        rootQuorumThreshold: 2,
        disableEmailAuth: true,
        rootUsers: [
          rootUser({
            userName: "alice",
            userEmail: "a@example.com",
            apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
          }),
          rootUser({ userName: "bob" }),
        ],
      }),
    );
    const { subOrganizationId, rootUserIds } = completed(res, "createSubOrganizationResultV8");
    assert.match(subOrganizationId, UUID);
    assert.equal(rootUserIds.length, 2);
    assert.equal(res.json.activity.organizationId, h().root.organizationId);
    const alice: Creds = { organizationId: subOrganizationId, userId: rootUserIds[0], key };
    const who = await h().query("whoami", {}, { as: alice });
    assert.deepEqual(who.json, { organizationId: subOrganizationId, organizationName: "sub", userId: rootUserIds[0], username: "alice" });
    const listed = await h().query("list_suborgs");
    assert.ok(listed.json.organizationIds.includes(subOrganizationId));
  });

  it("V7 (older clients) answers with its own intent and result names", async () => {
    const res = await h().submit(OP, "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", params());
    completed(res, createSubOrganizationV7);
    assert.ok(res.json.activity.intent.createSubOrganizationIntentV7);
  });

  it("the same body twice is one sub-organization", async () => {
    const before = (await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length;
    await assertIdempotent(h(), OP, V8, params({ subOrganizationName: "idem" }));
    assert.equal((await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length, before + 1);
  });

  const refused: [string, Json, RegExp, string][] = [
    ["a blank name", params({ subOrganizationName: " " }), /subOrganizationName/, "parameters.subOrganizationName"],
    ["no root users", params({ rootUsers: [] }), /rootUsers must hold 1 to 100/, "parameters.rootUsers"],
    ["a zero threshold", params({ rootQuorumThreshold: 0 }), /positive integer/, "parameters.rootQuorumThreshold"],
    ["a fractional threshold", params({ rootQuorumThreshold: 1.5 }), /positive integer/, "parameters.rootQuorumThreshold"],
    ["a threshold above the root users", params({ rootQuorumThreshold: 2 }), /must not exceed/, "parameters.rootQuorumThreshold"],
    [
      "a wallet account with an ed25519 Ethereum address",
      params({
        wallet: {
          walletName: "w",
          accounts: [{ curve: "CURVE_ED25519", pathFormat: "PATH_FORMAT_BIP32", path: "m/0'", addressFormat: "ADDRESS_FORMAT_ETHEREUM" }],
        },
      }),
      /CURVE_ED25519/,
      "parameters.wallet.accounts[0].addressFormat",
    ],
    ["a wallet without accounts", params({ wallet: { walletName: "w" } }), /must be set/, "parameters.wallet.accounts"],
    ["a malformed verification token", params({ verificationToken: "t" }), /malformed verification token/, "parameters.verificationToken"],
    [
      "a client signature without a token",
      params({ clientSignature: { publicKey: publicKey(), scheme: "CLIENT_SIGNATURE_SCHEME_API_P256", message: "{}", signature: "00" } }),
      /only meaningful with a verificationToken/,
      "parameters.clientSignature",
    ],
    [
      "a client signature of another scheme",
      params({ verificationToken: "t", clientSignature: { publicKey: publicKey(), scheme: "X", message: "{}", signature: "00" } }),
      /CLIENT_SIGNATURE_SCHEME_API_P256/,
      "parameters.clientSignature.scheme",
    ],
    [
      "a passkey without its fields",
      params({ rootUsers: [rootUser({ authenticators: [{}] })] }),
      /must be set/,
      "parameters.rootUsers[0].authenticators[0].authenticatorName",
    ],
    ["a non-boolean setting", params({ disableSmsAuth: "yes" }), /boolean/i, "parameters.disableSmsAuth"],
    ["a bad root user email", params({ rootUsers: [rootUser({ userEmail: "@" })] }), /valid email/, "parameters.rootUsers[0].userEmail"],
  ];
  for (const [what, p, message, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().submit(OP, V8, p), message, [field]);
    });
  }

  it("refuses two root users with one email (409) and creates nothing", async () => {
    const before = (await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length;
    conflict(
      await h().submit(OP, V8, params({ rootUsers: [rootUser({ userEmail: "s@example.com" }), rootUser({ userEmail: "S@example.com" })] })),
    );
    assert.equal((await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length, before);
  });

  it("nests at most 8 levels (400, FAILED_PRECONDITION)", async () => {
    let parent: Creds = h().root;
    for (let depth = 1; depth < 8; depth++) {
      const key = generateP256KeyPair();
      const res = await h().submit(
        OP,
        V8,
        params({ rootUsers: [rootUser({ apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }] })] }),
        { as: parent },
      );
      const r = completed(res, "createSubOrganizationResultV8");
      parent = { organizationId: r.subOrganizationId, userId: r.rootUserIds[0], key };
    }
    precondition(
      await h().submit(
        OP,
        V8,
        params({ rootUsers: [rootUser({ apiKeys: [{ apiKeyName: "k", publicKey: publicKey(), curveType: "API_KEY_CURVE_P256" }] })] }),
        { as: parent },
      ),
      /at most 8 levels/,
    );
  });

  it("a parent's credential cannot create an organization inside its sub-organization (403)", async () => {
    const { subOrganizationId } = completed(await h().submit(OP, V8, params()), createSubOrganizationV8);
    forbidden(await h().submit(OP, V8, params(), { organizationId: subOrganizationId }));
  });
});

// Verified sign-up: a verification token marks the contact it proves verified on the root
// user carrying it; the token key's client signature must describe that user exactly.
perEngine("create_sub_organization with a verification token", (h) => {
  let n = 0;
  const email = () => `signup${++n}-${Date.now()}@example.com`;
  const apiKey = () => ({ apiKeyName: `k${n}`, publicKey: generateP256KeyPair().publicKey, curveType: "API_KEY_CURVE_P256" });
  /** The TokenUsage message as @turnkey/core's getClientSignatureMessageForSignup builds it. */
  const usage = (t: MintedToken, user: Json, key = "signupV2", over: Json = {}) => ({
    [key]: {
      apiKeys: user.apiKeys,
      authenticators: user.authenticators,
      oauthProviders: user.oauthProviders,
      ...(user.userEmail ? { email: user.userEmail } : {}),
      ...(user.userPhoneNumber ? { phoneNumber: user.userPhoneNumber } : {}),
      ...over,
    },
    tokenId: t.claims.id,
    type: "USAGE_TYPE_SIGNUP",
  });
  /** A sign-up as the proxy forwards core's signup_v2: one root user holding the contact. */
  const signup = (t: MintedToken, user: Json, extra: Json = {}) =>
    params({
      subOrganizationName: `s${n}`,
      rootUsers: [user],
      verificationToken: t.token,
      clientSignature: clientSignature(t.key, usage(t, user)),
      ...extra,
    });
  const verifiedAt = (userId: string) =>
    h()
      .service.store.db.selectFrom("users")
      .select(["email_verified_at", "phone_verified_at"])
      .where("id", "=", userId)
      .executeTakeFirstOrThrow();
  const verifiedSuborgs = async (filterType: string, filterValue: string) =>
    (await h().query("list_verified_suborgs", { filterType, filterValue, paginationOptions: { limit: "100" } })).json
      .organizationIds as string[];
  const suborgs = async (filterType: string, filterValue: string) =>
    (await h().query("list_suborgs", { filterType, filterValue, paginationOptions: { limit: "100" } })).json.organizationIds as string[];
  const newestActivity = async () =>
    (await h().query("list_activities", { paginationOptions: { limit: "1" } })).json.activities[0]?.id as string;

  it("marks the root user's email verified; list_verified_suborgs finds it, not an unverified sub-organization with the same email", async () => {
    const address = email();
    // Unverified: a sub-organization whose own user wrote the address (no token).
    const selfKey = generateP256KeyPair();
    const plain = completed(
      await h().submit(
        OP,
        V8,
        params({
          rootUsers: [rootUser({ apiKeys: [{ apiKeyName: "k", publicKey: selfKey.publicKey, curveType: "API_KEY_CURVE_P256" }] })],
        }),
      ),
      "createSubOrganizationResultV8",
    );
    const self: Creds = { organizationId: plain.subOrganizationId, userId: plain.rootUserIds[0], key: selfKey };
    completed(
      await h().submit("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL", { userId: self.userId, userEmail: address }, { as: self }),
      "updateUserEmailResult",
    );
    const t = await mintVerificationToken(h(), { contact: address.toUpperCase() });
    const user = rootUser({ userName: "alice", userEmail: address, apiKeys: [apiKey()] });
    const res = await h().submit(OP, V8, signup(t, user));
    const { subOrganizationId, rootUserIds } = completed(res, "createSubOrganizationResultV8");
    assert.ok(Number((await verifiedAt(rootUserIds[0])).email_verified_at) > 0);
    assert.equal((await verifiedAt(rootUserIds[0])).phone_verified_at, null);
    assert.equal((await verifiedAt(plain.rootUserIds[0])).email_verified_at, null);
    assert.deepEqual(await verifiedSuborgs("EMAIL", address.toUpperCase()), [subOrganizationId]);
    assert.deepEqual(await suborgs("EMAIL", address), [plain.subOrganizationId, subOrganizationId]);
    // The root user's API key acts in the new organization.
    assert.equal(
      (await h().query("get_user", { userId: rootUserIds[0] }, { organizationId: subOrganizationId })).json.user.userEmail,
      address,
    );
  });

  it("without a token, a top-level organization vouches for its root users' contacts; a sub-organization's own sub-organizations get none", async () => {
    const address = email();
    const number = `+4420719${String(Date.now()).slice(-5)}`;
    const key = generateP256KeyPair();
    const top = completed(
      await h().submit(
        OP,
        V8,
        params({
          rootUsers: [
            rootUser({
              userEmail: address,
              userPhoneNumber: number,
              apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
            }),
          ],
        }),
      ),
      "createSubOrganizationResultV8",
    );
    const vouched = await verifiedAt(top.rootUserIds[0]);
    assert.ok(Number(vouched.email_verified_at) > 0 && Number(vouched.phone_verified_at) > 0, JSON.stringify(vouched));
    assert.deepEqual(await verifiedSuborgs("EMAIL", address), [top.subOrganizationId]);
    // The sub-organization (a tenant) creates one of its own with an address: not vouched.
    const tenant: Creds = { organizationId: top.subOrganizationId, userId: top.rootUserIds[0], key };
    const nested = completed(
      await h().submit(OP, V8, params({ rootUsers: [rootUser({ userEmail: email(), userPhoneNumber: number })] }), { as: tenant }),
      "createSubOrganizationResultV8",
    );
    assert.deepEqual(await verifiedAt(nested.rootUserIds[0]), { email_verified_at: null, phone_verified_at: null });
  });

  it("an SMS token verifies the phone number; the other root users stay unverified", async () => {
    const number = `+4420718${String(Date.now()).slice(-5)}`;
    const t = await mintVerificationToken(h(), { contact: number, type: "OTP_TYPE_SMS" });
    const user: Json = rootUser({ userName: "p", userPhoneNumber: number, userEmail: email() });
    const p = params({
      rootUsers: [rootUser({ userName: "other", userEmail: email() }), user],
      verificationToken: t.token,
      clientSignature: clientSignature(t.key, usage(t, user)),
    });
    const { subOrganizationId, rootUserIds } = completed(await h().submit(OP, V8, p), "createSubOrganizationResultV8");
    assert.deepEqual(
      { ...(await verifiedAt(rootUserIds[1])), phone_verified_at: Number((await verifiedAt(rootUserIds[1])).phone_verified_at) > 0 },
      { email_verified_at: null, phone_verified_at: true },
    );
    assert.deepEqual(await verifiedAt(rootUserIds[0]), { email_verified_at: null, phone_verified_at: null });
    assert.deepEqual(await verifiedSuborgs("PHONE_NUMBER", number), [subOrganizationId]);
    assert.deepEqual(await verifiedSuborgs("EMAIL", user.userEmail), []);
  });

  it("V7 takes the sign-up signed as `signup`", async () => {
    const address = email();
    const t = await mintVerificationToken(h(), { contact: address });
    const user = rootUser({ userEmail: address });
    const res = await h().submit(
      OP,
      "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
      signup(t, user, { clientSignature: clientSignature(t.key, usage(t, user, "signup")) }),
    );
    const { subOrganizationId } = completed(res, createSubOrganizationV7);
    assert.deepEqual(await verifiedSuborgs("EMAIL", address), [subOrganizationId]);
  });

  it("a parent's token serves sign-ups in its sub-organizations", async () => {
    const key = generateP256KeyPair();
    const mid = completed(
      await h().submit(
        OP,
        V8,
        params({ rootUsers: [rootUser({ apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }] })] }),
      ),
      "createSubOrganizationResultV8",
    );
    const as: Creds = { organizationId: mid.subOrganizationId, userId: mid.rootUserIds[0], key };
    const address = email();
    const t = await mintVerificationToken(h(), { contact: address });
    const { subOrganizationId } = completed(
      await h().submit(OP, V8, signup(t, rootUser({ userEmail: address })), { as }),
      createSubOrganizationV8,
    );
    const found = await h().query(
      "list_verified_suborgs",
      { filterType: "EMAIL", filterValue: address },
      { organizationId: mid.subOrganizationId },
    );
    assert.deepEqual(found.json.organizationIds, [subOrganizationId]);
  });

  // Each refusal: a clear 400 naming the field, and nothing executed — no sub-organization,
  // no activity recorded, the token still unused.
  const refusals: [string, () => Promise<Json>, RegExp, string[]][] = [
    [
      "a token already used to sign up",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        completed(await h().submit(OP, V8, signup(t, rootUser({ userEmail: address }))), createSubOrganizationV8);
        return signup(t, rootUser({ userName: "again", userEmail: address }));
      },
      /already been used/,
      ["parameters.verificationToken"],
    ],
    [
      "a token for another contact",
      async () => {
        const t = await mintVerificationToken(h(), { contact: email() });
        return signup(t, rootUser({ userEmail: email() }));
      },
      /no root user has/,
      ["parameters.verificationToken"],
    ],
    [
      "a token issued by an unrelated organization",
      async () => {
        const address = email();
        const other = await h().newOrg("Unrelated");
        return signup(
          await mintVerificationToken(h(), { organizationId: other.organizationId, contact: address }),
          rootUser({ userEmail: address }),
        );
      },
      /not .* or one of its parents/,
      ["parameters.verificationToken"],
    ],
    [
      "a token issued by a sub-organization (tokens serve downwards only)",
      async () => {
        const address = email();
        const sub = completed(await h().submit(OP, V8, params()), createSubOrganizationV8);
        return signup(
          await mintVerificationToken(h(), { organizationId: sub.subOrganizationId, contact: address }),
          rootUser({ userEmail: address }),
        );
      },
      /not .* or one of its parents/,
      ["parameters.verificationToken"],
    ],
    [
      "an expired token",
      async () => {
        const address = email();
        return signup(await mintVerificationToken(h(), { contact: address, lifetimeSeconds: -1 }), rootUser({ userEmail: address }));
      },
      /expired/,
      ["parameters.verificationToken"],
    ],
    [
      "a client signature by another key",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        const user = rootUser({ userEmail: address });
        return signup(t, user, { clientSignature: clientSignature(generateP256(), usage(t, user)) });
      },
      /public key the verification token is bound to/,
      ["parameters.clientSignature"],
    ],
    [
      "a signature by another key claiming the token's key",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        const user = rootUser({ userEmail: address });
        const forged = { ...clientSignature(generateP256(), usage(t, user)), publicKey: t.key.publicCompressed };
        return signup(t, user, { clientSignature: forged });
      },
      /invalid client signature/,
      ["parameters.clientSignature"],
    ],
    [
      "a signed sign-up with other API keys than the request's",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        const signed = rootUser({ userEmail: address, apiKeys: [apiKey()] });
        // Someone holding the token but not the key that signed adds their own API key.
        return signup(t, signed, { rootUsers: [{ ...signed, apiKeys: [apiKey()] }] });
      },
      /does not match the request/,
      ["parameters.clientSignature.message.signupV2.apiKeys"],
    ],
    [
      "a signed sign-up for another email",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        const user = rootUser({ userEmail: address });
        return signup(t, user, { clientSignature: clientSignature(t.key, usage(t, user, "signupV2", { email: email() })) });
      },
      /does not match the request/,
      ["parameters.clientSignature.message.signupV2.email"],
    ],
    [
      "a signed sign-up that leaves out the phone number",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        const user = rootUser({ userEmail: address, userPhoneNumber: "+14155550177" });
        return signup(t, user, { clientSignature: clientSignature(t.key, usage(t, rootUser({ userEmail: address }))) });
      },
      /does not match the request/,
      ["parameters.clientSignature.message.signupV2.phoneNumber"],
    ],
    [
      "a V8 sign-up signed as `signup` (V7's)",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        const user = rootUser({ userEmail: address });
        return signup(t, user, { clientSignature: clientSignature(t.key, usage(t, user, "signup")) });
      },
      /under "signupV2"/,
      ["parameters.clientSignature.message.signupV2"],
    ],
    [
      "a signature for a login",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        return signup(t, rootUser({ userEmail: address }), {
          clientSignature: clientSignature(t.key, {
            login: { publicKey: t.key.publicCompressed },
            tokenId: t.claims.id,
            type: "USAGE_TYPE_LOGIN",
          }),
        });
      },
      /USAGE_TYPE_SIGNUP/,
      ["parameters.clientSignature"],
    ],
    [
      "a signature naming another token",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        const other = await mintVerificationToken(h(), { contact: address, key: t.key });
        const user = rootUser({ userEmail: address });
        return signup(t, user, { clientSignature: clientSignature(t.key, usage(other, user)) });
      },
      /does not name this verification token/,
      ["parameters.clientSignature"],
    ],
    [
      "a signed sign-up nested 20,000 levels deep",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        const user = rootUser({ userEmail: address, apiKeys: [apiKey()] });
        const deep = "[".repeat(20_000) + "]".repeat(20_000);
        const message = `{"signupV2":{"apiKeys":[${deep}],"authenticators":[],"oauthProviders":[],"email":${JSON.stringify(address)}},"tokenId":"${t.claims.id}","type":"USAGE_TYPE_SIGNUP"}`;
        const sig = {
          publicKey: t.key.publicCompressed,
          scheme: "CLIENT_SIGNATURE_SCHEME_API_P256",
          message,
          signature: signP256(t.key, Buffer.from(message), "raw").toString("hex"),
        };
        return signup(t, user, { clientSignature: sig });
      },
      /does not match the request/,
      ["parameters.clientSignature.message.signupV2.apiKeys"],
    ],
    [
      "a missing client signature",
      async () => {
        const address = email();
        const t = await mintVerificationToken(h(), { contact: address });
        return params({ rootUsers: [rootUser({ userEmail: address })], verificationToken: t.token });
      },
      /required with a verificationToken/,
      ["parameters.clientSignature"],
    ],
    [
      "two root users with the verified number",
      async () => {
        const number = "+14155550188";
        const t = await mintVerificationToken(h(), { contact: number, type: "OTP_TYPE_SMS" });
        const user = rootUser({ userPhoneNumber: number });
        return params({
          rootUsers: [user, rootUser({ userName: "twin", userPhoneNumber: number })],
          verificationToken: t.token,
          clientSignature: clientSignature(t.key, usage(t, user)),
        });
      },
      /exactly one may/,
      ["parameters.rootUsers"],
    ],
  ];
  for (const [what, build, message, fields] of refusals) {
    it(`refuses ${what} (400); nothing is created`, async () => {
      const p = await build();
      const before = {
        activity: await newestActivity(),
        suborgs: (await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds,
      };
      invalidRequest(await h().submit(OP, V8, p), message, fields);
      assert.equal(await newestActivity(), before.activity);
      assert.deepEqual((await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds, before.suborgs);
    });
  }

  it("a token signs up once however many sign-ups race for it", async () => {
    const address = email();
    const t = await mintVerificationToken(h(), { contact: address });
    const results = await Promise.all(
      [0, 1, 2].map((i) => h().submit(OP, V8, signup(t, rootUser({ userName: `race${i}`, userEmail: address })))),
    );
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400], JSON.stringify(results.map((r) => r.json)));
    for (const r of results.filter((r) => r.status === 400)) invalidRequest(r, /already been used/);
    assert.equal((await verifiedSuborgs("EMAIL", address)).length, 1);
  });
});

// Passkey root users (the sign-up core's signUpWithPasskey makes): the passkey is verified,
// stored with the user, signs in the new sub-organization, and finds it by CREDENTIAL_ID.
import { SoftPasskey, queryWithPasskey } from "../helpers/webauthn.ts";

perEngine("create_sub_organization with passkey root users", (h) => {
  it("registers the root user's passkey; it signs there, and list_suborgs CREDENTIAL_ID finds the sub-organization", async () => {
    const pk = new SoftPasskey({ alg: "RS256" });
    const res = await h().submit(
      OP,
      V8,
      params({
        subOrganizationName: "passkey sub",
        rootUsers: [rootUser({ userName: "pk", authenticators: [pk.registration({ name: "signup" })] })],
      }),
    );
    const { subOrganizationId, rootUserIds } = completed(res, createSubOrganizationV8);
    const user = (await h().query("get_user", { userId: rootUserIds[0] }, { organizationId: subOrganizationId })).json.user as Json;
    assert.equal(user.authenticators.length, 1);
    assert.equal(user.authenticators[0].credentialId, pk.id);
    assert.equal(user.authenticators[0].authenticatorName, "signup");
    const who = await queryWithPasskey(h(), pk, "whoami", { organizationId: subOrganizationId });
    assert.equal(who.json.userId, rootUserIds[0]);
    const found = await h().query("list_suborgs", { filterType: "CREDENTIAL_ID", filterValue: pk.id });
    assert.deepEqual(found.json.organizationIds, [subOrganizationId]);
  });

  it("a passkey that does not verify refuses the whole sign-up (400, naming the field)", async () => {
    const before = (await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length;
    const bad = new SoftPasskey().registration({ type: "webauthn.get" });
    invalidRequest(
      await h().submit(OP, V8, params({ rootUsers: [rootUser(), rootUser({ userName: "s", authenticators: [bad] })] })),
      /invalid authenticator attestation/,
      ["parameters.rootUsers[1].authenticators[0].attestation.clientDataJson"],
    );
    const pk = new SoftPasskey();
    conflict(
      await h().submit(
        OP,
        V8,
        params({
          rootUsers: [
            rootUser({ authenticators: [pk.registration()] }),
            rootUser({ userName: "twin", authenticators: [pk.registration()] }),
          ],
        }),
      ),
      /already exists/,
    );
    assert.equal((await h().query("list_suborgs", { paginationOptions: { limit: "100" } })).json.organizationIds.length, before);
  });
});

// The comparison itself (pure): what core signs against what the request creates.
it("verified sign-up compares passkeys, API keys and OAuth providers field by field, in order", () => {
  const attestation = {
    credentialId: "Y3JlZA",
    clientDataJson: "e30",
    attestationObject: "o2M",
    transports: ["AUTHENTICATOR_TRANSPORT_INTERNAL"],
  };
  const user = {
    userEmail: "Pk@Example.com",
    apiKeys: [{ apiKeyName: "k", publicKey: "02AB", curveType: "API_KEY_CURVE_P256" }],
    authenticators: [{ authenticatorName: "pk", challenge: "Y2g", attestation }],
    oauthProviders: [],
  };
  const same = {
    // Key order, public-key case and the email's case do not matter.
    authenticators: [
      {
        attestation: { transports: attestation.transports, attestationObject: "o2M", clientDataJson: "e30", credentialId: "Y3JlZA" },
        challenge: "Y2g",
        authenticatorName: "pk",
      },
    ],
    apiKeys: [{ curveType: "API_KEY_CURVE_P256", publicKey: "02ab", apiKeyName: "k" }],
    email: "pk@example.com",
  };
  assert.deepEqual(signupMismatches(same, user), []);
  const fields = (over: Json) => signupMismatches({ ...same, ...over }, user).map((m) => m.usage);
  assert.deepEqual(fields({ authenticators: [{ ...same.authenticators[0], challenge: "b3RoZXI" }] }), ["authenticators"]);
  assert.deepEqual(fields({ authenticators: [] }), ["authenticators"]);
  assert.deepEqual(fields({ apiKeys: [{ ...same.apiKeys[0], expirationSeconds: "60" }] }), ["apiKeys"]);
  assert.deepEqual(fields({ oauthProviders: [{ providerName: "google", oidcToken: "t" }] }), ["oauthProviders"]);
  assert.deepEqual(fields({ email: undefined, phoneNumber: "+14155550100" }), ["email", "phoneNumber"]);
  assert.deepEqual(fields({ apiKeys: "02ab" }), ["apiKeys"]);
});

// OAuth root users (docs/oauth.md §6.3): sign-up with an OIDC identity, found by list_suborgs OIDC_TOKEN,
// logged in with oauth_login.
import { nonceOf, sigilToken } from "../helpers/oidc-tokens.ts";
import { failsWith } from "../helpers/inproc.ts";
import { oauthLogin } from "../../src/activities/oauth/oauth_login.ts";
import { createSubOrganizationV7, createSubOrganizationV8 } from "../../src/activities/organizations/create_sub_organization.ts";

perEngine("create_sub_organization with OAuth root users", (h) => {
  it("signs up an OAuth root user; list_suborgs OIDC_TOKEN finds it and oauth_login logs it in there", async () => {
    const sub = `x:${crypto.randomUUID()}`;
    const token = await sigilToken(h(), { sub, aud: "signup-app" });
    const res = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
      subOrganizationName: `oauth-${sub.slice(2, 10)}`,
      rootQuorumThreshold: 1,
      rootUsers: [{ userName: "social", apiKeys: [], authenticators: [], oauthProviders: [{ providerName: "X", oidcToken: token }] }],
    });
    const created = completed(res, createSubOrganizationV8);
    const found = await h().query("list_suborgs", { filterType: "OIDC_TOKEN", filterValue: token });
    assert.deepEqual(found.json.organizationIds, [created.subOrganizationId]);
    const key = generateP256KeyPair();
    const login = await h().submit(
      "oauth_login",
      "ACTIVITY_TYPE_OAUTH_LOGIN",
      {
        oidcToken: await sigilToken(h(), { sub, aud: "signup-app", nonce: nonceOf(key.publicKey) }),
        publicKey: key.publicKey,
      },
      { organizationId: created.subOrganizationId },
    );
    const session = completed(login, oauthLogin).session;
    const claims = JSON.parse(atob(session.split(".")[1]!)) as Json;
    assert.deepEqual([claims.user_id, claims.organization_id], [created.rootUserIds[0], created.subOrganizationId]);
  });

  it("an invalid token, or an identity already attached, refuses the whole sign-up and creates no organization", async () => {
    const before = (await h().service.store.db.selectFrom("organizations").select("id").execute()).length;
    const user = (oidcToken: string) => ({
      userName: "u",
      apiKeys: [],
      authenticators: [],
      oauthProviders: [{ providerName: "X", oidcToken }],
    });
    const signup = (oidcToken: string) =>
      h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: "refused",
        rootQuorumThreshold: 1,
        rootUsers: [user(oidcToken)],
      });
    failsWith(await signup(await sigilToken(h(), { ttl: -600 })), 400, 3, "INVALID_OIDC_TOKEN", /expired/, [
      "parameters.rootUsers[0].oauthProviders[0].oidcToken",
    ]);
    const taken = await sigilToken(h(), { sub: `x:${crypto.randomUUID()}` });
    const first = completed(await signup(taken), createSubOrganizationV8);
    failsWith(await signup(taken), 409, 6, "OAUTH_PROVIDER_ALREADY_EXISTS", /already attached/);
    assert.equal((await h().service.store.db.selectFrom("organizations").select("id").execute()).length, before + 1);
    assert.ok(first.subOrganizationId);
  });
});
