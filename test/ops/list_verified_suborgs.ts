import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, perEngine, type Creds, type Harness, type Json } from "../helpers/inproc.ts";
import { clientSignature, mintVerificationToken } from "../helpers/tokens.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { signP256 } from "../../src/crypto/p256.ts";
import { createSubOrganizationV8 } from "../../src/activities/organizations/create_sub_organization.ts";
import { updateUserEmail } from "../../src/activities/users/update_user_email.ts";
import { updateUserPhoneNumber } from "../../src/activities/users/update_user_phone_number.ts";

const OP = "list_verified_suborgs";
const V8 = "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8";
const rootUser = (over: Json = {}): Json => ({ userName: "r", apiKeys: [], authenticators: [], oauthProviders: [], ...over });

/** A sub-organization of `parent` whose root user has `user`'s contacts; verified with a token for `verify` when given. */
async function subOrg(
  h: Harness,
  parent: Creds,
  user: Json,
  verify?: { contact: string; type: "OTP_TYPE_EMAIL" | "OTP_TYPE_SMS" },
): Promise<string> {
  let extra: Json = {};
  if (verify) {
    const t = await mintVerificationToken(h, { organizationId: parent.organizationId, ...verify });
    const signupV2 = {
      apiKeys: user.apiKeys,
      authenticators: user.authenticators,
      oauthProviders: user.oauthProviders,
      ...(user.userEmail ? { email: user.userEmail } : {}),
      ...(user.userPhoneNumber ? { phoneNumber: user.userPhoneNumber } : {}),
    };
    extra = {
      verificationToken: t.token,
      clientSignature: clientSignature(t.key, { signupV2, tokenId: t.claims.id, type: "USAGE_TYPE_SIGNUP" }),
    };
  }
  const res = await h.submit(
    "create_sub_organization",
    V8,
    { subOrganizationName: "s", rootQuorumThreshold: 1, rootUsers: [user], ...extra },
    { as: parent },
  );
  return completed(res, createSubOrganizationV8).subOrganizationId;
}

/**
 * A sub-organization of `parent` whose own root user (not the parent) wrote the contacts,
 * without a token: unverified (a top-level parent vouches only for what it writes itself,
 * docs/login-lookups.md §1).
 */
async function selfWritten(h: Harness, parent: Creds, contacts: { userEmail?: string; userPhoneNumber?: string }): Promise<string> {
  const key = generateP256KeyPair();
  const sub = await subOrg(
    h,
    parent,
    rootUser({ apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }] }),
  );
  const users = (await h.query("list_users", {}, { organizationId: sub, as: parent })).json.users as Json[];
  const me: Creds = { organizationId: sub, userId: users[0]!.userId, key };
  if (contacts.userEmail)
    completed(
      await h.submit(
        "update_user_email",
        "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
        { userId: me.userId, userEmail: contacts.userEmail },
        { as: me },
      ),
      updateUserEmail,
    );
  if (contacts.userPhoneNumber) {
    completed(
      await h.submit(
        "update_user_phone_number",
        "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER",
        { userId: me.userId, userPhoneNumber: contacts.userPhoneNumber },
        { as: me },
      ),
      updateUserPhoneNumber,
    );
  }
  return sub;
}

perEngine("list_verified_suborgs", (h) => {
  let parent: Creds;
  const verified: string[] = [];
  let unverified: string;
  const list = async (body: Json, organizationId = parent.organizationId) => {
    const res = await h().query(OP, body, { as: parent, organizationId });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.organizationIds as string[];
  };

  it("lists the direct sub-organizations whose user has the email or phone number verified, oldest first, paged", async () => {
    parent = await h().newOrg("Verified Parent");
    const address = "Shared@Example.com";
    const number = "+14155550123";
    unverified = await selfWritten(h(), parent, { userEmail: address, userPhoneNumber: number });
    for (let i = 0; i < 3; i++)
      verified.push(
        await subOrg(h(), parent, rootUser({ userEmail: address }), { contact: address.toLowerCase(), type: "OTP_TYPE_EMAIL" }),
      );
    const byPhone = await subOrg(h(), parent, rootUser({ userEmail: "p@example.com", userPhoneNumber: number }), {
      contact: number,
      type: "OTP_TYPE_SMS",
    });

    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: "shared@example.COM" }), verified);
    assert.deepEqual(await list({ filterType: "PHONE_NUMBER", filterValue: number }), [byPhone]);
    // An email verified by SMS sign-up is not: only the contact the token proved.
    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: "p@example.com" }), []);
    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: "nobody@example.com" }), []);
    // list_suborgs sees the unverified one too.
    const all = (await h().query("list_suborgs", { filterType: "EMAIL", filterValue: address }, { as: parent })).json.organizationIds;
    assert.deepEqual(all, [unverified, ...verified]);
    // Pages.
    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: address, paginationOptions: { limit: "2" } }), verified.slice(0, 2));
    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: address, paginationOptions: { limit: "2", after: verified[1] } }), [
      verified[2],
    ]);
    assert.deepEqual(
      await list({ filterType: "EMAIL", filterValue: address, paginationOptions: { before: verified[2] } }),
      verified.slice(0, 2),
    );
  });

  it("follows verification as contacts change: verified by update_user_email, unverified by a change without a token", async () => {
    const key = generateP256KeyPair();
    const sub = await subOrg(
      h(),
      parent,
      rootUser({ apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }] }),
    );
    const users = (await h().query("list_users", {}, { organizationId: sub, as: parent })).json.users as Json[];
    const me: Creds = { organizationId: sub, userId: users[0]!.userId, key };
    const address = "late@example.com";
    // Bound to the key that stamps the update (docs/login-lookups.md §4).
    const t = await mintVerificationToken(h(), { organizationId: parent.organizationId, contact: address, boundTo: key.publicKey });
    completed(
      await h().submit(
        "update_user_email",
        "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
        { userId: me.userId, userEmail: address, verificationToken: t.token },
        { as: me },
      ),
      updateUserEmail,
    );
    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: address }), [sub]);
    completed(
      await h().submit("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL", { userId: me.userId, userEmail: address }, { as: me }),
      updateUserEmail,
    );
    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: address }), []);
  });

  it("only direct sub-organizations: a grandchild is listed by its own parent", async () => {
    const key = generateP256KeyPair();
    const mid = await subOrg(
      h(),
      parent,
      rootUser({ apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }] }),
    );
    const midUsers = (await h().query("list_users", {}, { organizationId: mid, as: parent })).json.users as Json[];
    const midCreds: Creds = { organizationId: mid, userId: midUsers[0]!.userId, key };
    const address = "grand@example.com";
    const grand = await subOrg(h(), midCreds, rootUser({ userEmail: address }), { contact: address, type: "OTP_TYPE_EMAIL" });
    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: address }), []);
    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: address }, mid), [grand]);
  });

  it("the official clients: core's sign-up message, sdk-server's createSubOrganization, getVerifiedSubOrgIds and the contact updates", async () => {
    // Loaded here: importing @turnkey/core costs more than the rest of this file.
    const { getClientSignatureMessageForSignup } = await import("@turnkey/core");
    const sdk = await h().sdk(parent);
    const address = "sdk@example.com";
    const t = await mintVerificationToken(h(), { organizationId: parent.organizationId, contact: address });
    const apiKeys = [{ apiKeyName: "api-key-1", publicKey: generateP256KeyPair().publicKey, curveType: "API_KEY_CURVE_P256" as const }];
    const { message, publicKey } = getClientSignatureMessageForSignup({
      verificationToken: t.token,
      email: address,
      apiKeys,
      authenticators: [],
      oauthProviders: [],
    });
    const created = await sdk.createSubOrganization({
      subOrganizationName: "sdk",
      rootQuorumThreshold: 1,
      rootUsers: [{ userName: address, userEmail: address, apiKeys, authenticators: [], oauthProviders: [] }],
      verificationToken: t.token,
      clientSignature: {
        publicKey,
        scheme: "CLIENT_SIGNATURE_SCHEME_API_P256",
        message,
        signature: signP256(t.key, Buffer.from(message, "utf8"), "raw").toString("hex"),
      },
    });
    assert.deepEqual((await sdk.getVerifiedSubOrgIds({ filterType: "EMAIL", filterValue: address })).organizationIds, [
      created.subOrganizationId,
    ]);

    // The contact updates through sdk-server, as the parent's root user would run them in its own organization.
    const userId = parent.userId;
    const number = "+14155550166";
    const sms = await mintVerificationToken(h(), {
      organizationId: parent.organizationId,
      contact: number,
      type: "OTP_TYPE_SMS",
      boundTo: parent.key.publicKey,
    });
    assert.equal((await sdk.updateUserPhoneNumber({ userId, userPhoneNumber: number, verificationToken: sms.token })).userId, userId);
    assert.equal((await sdk.updateUserName({ userId, userName: "renamed" })).userId, userId);
    assert.equal((await sdk.updateUserEmail({ userId, userEmail: "" })).userId, userId);
    const { user } = await sdk.getUser({ userId });
    assert.equal(user.userName, "renamed");
    assert.equal(user.userPhoneNumber, number);
    assert.equal(user.userEmail, undefined);
  });

  const refused: [string, Json, RegExp, string][] = [
    [
      "a filter type list_suborgs has but this query does not",
      { filterType: "USERNAME", filterValue: "r" },
      /not a filter of verified contacts/,
      "filterType",
    ],
    ["an unknown filter type", { filterType: "__proto__", filterValue: "x" }, /not a filter of verified contacts/, "filterType"],
    ["no filter type", { filterValue: "x" }, /not a filter of verified contacts/, "filterType"],
    ["a filter type without value", { filterType: "EMAIL" }, /filterValue must be set/, "filterValue"],
    ["a filter value over 1024 characters", { filterType: "EMAIL", filterValue: "x".repeat(1025) }, /filterValue/, "filterValue"],
    [
      "a cursor that is not a sub-organization",
      { filterType: "EMAIL", filterValue: "x@example.com", paginationOptions: { after: "00000000-0000-4000-8000-000000000000" } },
      /no item/,
      "paginationOptions",
    ],
    [
      "a page over 100",
      { filterType: "EMAIL", filterValue: "x@example.com", paginationOptions: { limit: "101" } },
      /limit/,
      "paginationOptions.limit",
    ],
  ];
  for (const [what, body, message, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().query(OP, body), message, [field]);
    });
  }
});
