import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, onSqlite, publicKey, type Creds, type Json } from "../helpers/inproc.ts";

onSqlite("list_suborgs", (h) => {
  let parent: Creds;
  const subs: string[] = [];
  const list = async (body: Json) => {
    const res = await h().query("list_suborgs", body, { as: parent });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    return res.json.organizationIds as string[];
  };
  const key = publicKey();

  it("lists direct sub-organizations oldest first, filtered by NAME, USERNAME, EMAIL, PHONE_NUMBER, PUBLIC_KEY, paged", async () => {
    parent = await h().newOrg();
    const users = [
      { userName: "ann", userEmail: "Ann@Example.com", apiKeys: [], authenticators: [], oauthProviders: [] },
      {
        userName: "bo",
        userPhoneNumber: "+14155550199",
        apiKeys: [{ apiKeyName: "k", publicKey: key, curveType: "API_KEY_CURVE_P256" }],
        authenticators: [],
        oauthProviders: [],
      },
      { userName: "cy", apiKeys: [], authenticators: [], oauthProviders: [] },
    ];
    for (const [i, u] of users.entries()) {
      const r = await h().submit(
        "create_sub_organization",
        "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
        { subOrganizationName: `s${i}`, rootQuorumThreshold: 1, rootUsers: [u] },
        { as: parent },
      );
      subs.push(completed(r, createSubOrganizationV8).subOrganizationId);
    }
    assert.deepEqual(await list({}), subs);
    assert.deepEqual(await list({ filterType: "NAME", filterValue: "s1" }), [subs[1]]);
    assert.deepEqual(await list({ filterType: "USERNAME", filterValue: "cy" }), [subs[2]]);
    assert.deepEqual(await list({ filterType: "EMAIL", filterValue: "ann@example.COM" }), [subs[0]]);
    assert.deepEqual(await list({ filterType: "PHONE_NUMBER", filterValue: "+14155550199" }), [subs[1]]);
    assert.deepEqual(await list({ filterType: "PUBLIC_KEY", filterValue: key.toUpperCase() }), [subs[1]]);
    assert.deepEqual(await list({ filterType: "NAME", filterValue: "nobody" }), []);
    assert.deepEqual(await list({ paginationOptions: { limit: "1", after: subs[0] } }), [subs[1]]);
    assert.deepEqual(await list({ paginationOptions: { before: subs[2] } }), subs.slice(0, 2));
    // Only direct children: the root organization does not see its grandchildren.
    const grand = await h().query("list_suborgs", {}, { organizationId: subs[0], as: parent });
    assert.deepEqual(grand.json.organizationIds, []);
  });

  const refused: [string, Json, RegExp, string][] = [
    ["an unknown filter type", { filterType: "__proto__", filterValue: "x" }, /not a known filter type/, "filterType"],
    ["a filter type without value", { filterType: "NAME" }, /filterValue must be set/, "filterValue"],
    ["a filter value without type", { filterValue: "x" }, /filterType must be set/, "filterType"],
    [
      "a name over 1024 characters (only OIDC tokens may be longer)",
      { filterType: "NAME", filterValue: "x".repeat(1025) },
      /at most 1024 characters/,
      "filterValue",
    ],
    [
      "a cursor that is not a sub-organization",
      { paginationOptions: { after: "00000000-0000-4000-8000-000000000000" } },
      /no item/,
      "paginationOptions",
    ],
  ];
  for (const [what, body, message, field] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await h().query("list_suborgs", body), message, [field]);
    });
  }
});

// CREDENTIAL_ID: a passkey's credential id (b64url, as core sends it; base64 and padding too).
import { perEngine } from "../helpers/inproc.ts";
import { SoftPasskey } from "../helpers/webauthn.ts";

perEngine("list_suborgs CREDENTIAL_ID", (h) => {
  it("finds the sub-organization holding a passkey, however the id is padded or spelled", async () => {
    const pk = new SoftPasskey();
    const sub = completed(
      await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: "credential id",
        rootQuorumThreshold: 1,
        rootUsers: [{ userName: "pk", apiKeys: [], authenticators: [pk.registration()], oauthProviders: [] }],
      }),
      "createSubOrganizationResultV8",
    );
    const list = async (filterValue: string) =>
      (await h().query("list_suborgs", { filterType: "CREDENTIAL_ID", filterValue })).json.organizationIds as string[];
    assert.deepEqual(await list(pk.id), [sub.subOrganizationId]);
    assert.deepEqual(await list(pk.credentialId.toString("base64")), [sub.subOrganizationId]);
    assert.deepEqual(await list(new SoftPasskey().id), []);
    assert.deepEqual(await list("not base64!"), []);
  });
});

// OIDC_TOKEN: the token is verified (nonce not required), then its identity (iss, sub, aud) matched.
import { failsWith } from "../helpers/inproc.ts";
import { sigilToken } from "../helpers/oidc-tokens.ts";
import { createSubOrganizationV8 } from "../../src/activities/organizations/create_sub_organization.ts";

perEngine("list_suborgs OIDC_TOKEN", (h) => {
  it("finds the sub-organization whose user holds the token's identity; another audience or subject finds none; a bad token is 400", async () => {
    const sub = `x:${crypto.randomUUID()}`;
    const created = completed(
      await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
        subOrganizationName: "oidc token",
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: "o",
            apiKeys: [],
            authenticators: [],
            oauthProviders: [{ providerName: "X", oidcToken: await sigilToken(h(), { sub, aud: "lookup" }) }],
          },
        ],
      }),
      "createSubOrganizationResultV8",
    );
    const list = async (filterValue: string) => {
      const res = await h().query("list_suborgs", { filterType: "OIDC_TOKEN", filterValue });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      return res.json.organizationIds as string[];
    };
    // A fresh token of the same identity (any nonce, or none) finds it.
    assert.deepEqual(await list(await sigilToken(h(), { sub, aud: "lookup", nonce: "whatever" })), [created.subOrganizationId]);
    assert.deepEqual(await list(await sigilToken(h(), { sub, aud: "other" })), []);
    assert.deepEqual(await list(await sigilToken(h(), { sub: "x:nobody", aud: "lookup" })), []);
    failsWith(
      await h().query("list_suborgs", { filterType: "OIDC_TOKEN", filterValue: await sigilToken(h(), { sub, aud: "lookup", ttl: -600 }) }),
      400,
      3,
      "INVALID_OIDC_TOKEN",
      /expired/,
      ["filterValue"],
    );
    failsWith(await h().query("list_suborgs", { filterType: "OIDC_TOKEN", filterValue: "x" }), 400, 3, "INVALID_OIDC_TOKEN", /malformed/, [
      "filterValue",
    ]);
  });
});
