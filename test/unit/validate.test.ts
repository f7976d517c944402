import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { activitiesAt } from "../../src/activities/registry.ts";
import { pageRequest } from "../../src/store/pagination.ts";

function violations(fn: () => unknown): { message: string; fields: string[] } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 3);
    const body = err.toBody();
    const br = body.details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest") as
      { fieldViolations: { field: string }[] } | undefined;
    return { message: err.message, fields: br?.fieldViolations.map((v) => v.field) ?? [] };
  }
  assert.fail("expected a validation error");
}

const createUsers = activitiesAt("create_users")!.get("ACTIVITY_TYPE_CREATE_USERS_V4")!;

describe("parameter validation", () => {
  it("names every offending field with its path", () => {
    const v = violations(() =>
      createUsers.validator.parse(
        {
          users: [
            { userName: "", userEmail: "nope", userPhoneNumber: "555", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] },
            {
              userName: "ok",
              apiKeys: [{ apiKeyName: "k", publicKey: "zz", curveType: "API_KEY_CURVE_RSA" }],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
        "parameters",
      ),
    );
    assert.deepEqual(
      new Set(v.fields),
      new Set([
        "parameters.users[0].userName",
        "parameters.users[0].userEmail",
        "parameters.users[0].userPhoneNumber",
        "parameters.users[1].apiKeys[0].publicKey",
        "parameters.users[1].apiKeys[0].curveType",
      ]),
    );
    assert.match(v.message, /^bad request body: parameters\.users\[0\]\./);
  });

  it("says 'must be set' for missing required fields", () => {
    const v = violations(() => createUsers.validator.parse({}, "parameters"));
    assert.deepEqual(v.fields, ["parameters.users"]);
    assert.match(v.message, /parameters\.users must be set/);
  });

  it("drops unknown keys instead of storing them (core leaks generateAppProofs into parameters)", () => {
    const p = createUsers.validator.parse(
      { users: [{ userName: "a", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [], junk: 1 }], generateAppProofs: false },
      "parameters",
    ) as Record<string, unknown>;
    assert.deepEqual(p, { users: [{ userName: "a", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] });
  });

  it("returns a copy of the declared fields that shares nothing with the request, and never reads a dropped member", () => {
    const tags: string[] = [];
    const user = { userName: "a", apiKeys: [], authenticators: [], oauthProviders: [], userTags: tags };
    // A getter stands for a dropped member of any size: the copy must not touch it (docs/network.md §6.2).
    const dropped = Object.defineProperty({}, "deep", { enumerable: true, get: () => assert.fail("a dropped member was read") });
    const request = { users: [{ ...user, junk: dropped }], pad: dropped };
    const p = createUsers.validator.parse(request, "parameters") as { users: { userTags: string[] }[] };
    assert.deepEqual(p, { users: [user] });
    p.users[0]!.userTags.push("x");
    assert.deepEqual(tags, [], "the request's arrays are not the copy's");
    assert.notEqual(p.users[0], request.users[0]);
  });
});

describe("pagination options", () => {
  it("defaults to 10 and accepts 1..100", () => {
    assert.equal(pageRequest(undefined).limit, 10);
    assert.equal(pageRequest({ limit: "1" }).limit, 1);
    assert.equal(pageRequest({ limit: "100" }).limit, 100);
  });
  it("rejects 0, 101, and before with after", () => {
    assert.throws(() => pageRequest({ limit: "0" }), /between 1 and 100/);
    assert.throws(() => pageRequest({ limit: "101" }), /between 1 and 100/);
    assert.throws(() => pageRequest({ before: "a", after: "b" }), /either before or after/);
  });
});
