// What a request may contain, and what the server does before it knows who sent it:
//   - nothing in the body but organizationId is read before the stamp is verified and the
//     credential found (no validation, no policy compilation for strangers), and an unknown
//     organization is answered exactly like an unknown key;
//   - JSON nested deeper than 64 levels is refused at parse time (400, not a stack overflow);
//   - U+0000 in any string or field name is refused naming the field, on both engines;
//   - look-ups keyed by request strings never reach Object.prototype.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { engines, newInstance, sigilInit, startServer, type InitResult, type Instance, type RunningServer } from "../helpers/server.ts";
import {
  decodeStamp,
  encodeStamp,
  goodStamp,
  newKeyPair,
  rawPost,
  stampedPost,
  type KeyPair,
  type RawResponse,
} from "../helpers/raw-http.ts";

const TAG = "/public/v1/submit/create_user_tag";
const POLICY = "/public/v1/submit/create_policy";
const WHOAMI = "/public/v1/query/whoami";
const SUBORGS = "/public/v1/query/list_suborgs";
const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";
const UNKNOWN_KEY = "could not find public key in organization or its parent organization";
const PROTOTYPE_NAMES = [
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "isPrototypeOf",
  "propertyIsEnumerable",
  "toLocaleString",
  "__defineGetter__",
  "__lookupGetter__",
];

type ErrorBody = { code: number; message: string; details: Array<Record<string, unknown>> };

function assertError(res: RawResponse, status: number, code: number, category?: string): ErrorBody {
  const ctx = `HTTP ${res.status}: ${res.text.slice(0, 500)}`;
  assert.equal(res.status, status, ctx);
  assert.ok(res.json && typeof res.json === "object", ctx);
  assert.deepEqual(Object.keys(res.json).sort(), ["code", "details", "message"], ctx);
  assert.equal(res.json.code, code, ctx);
  assert.equal(res.json.details[0]["@type"], "type.googleapis.com/errors.v1.TurnkeyErrorDetail", ctx);
  if (category) assert.equal(res.json.details[0].turnkeyErrorCode, category, ctx);
  return res.json as ErrorBody;
}

const violatedFields = (body: ErrorBody) =>
  ((body.details.find((d) => d["@type"] === BAD_REQUEST)?.fieldViolations as { field: string }[] | undefined) ?? []).map((v) => v.field);

/** `[[[…"x"…]]]` nested `depth` levels (arrays) around `inner`. */
const nested = (depth: number, inner = "0") => "[".repeat(depth) + inner + "]".repeat(depth);

for (const engine of engines()) {
  describe(`input limits and unauthenticated work (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let root: InitResult;
    let rootKey: KeyPair;
    let seq = 0;

    const tagBody = (parameters: Record<string, unknown> = {}, organizationId = root.organizationId) =>
      JSON.stringify({
        type: "ACTIVITY_TYPE_CREATE_USER_TAG",
        timestampMs: String(Date.now()),
        organizationId,
        parameters: { userTagName: `limits-${engine.name}-${++seq}`, userIds: [], ...parameters },
      });
    const policyBody = (condition: string) =>
      JSON.stringify({
        type: "ACTIVITY_TYPE_CREATE_POLICY_V3",
        timestampMs: String(Date.now()),
        organizationId: root.organizationId,
        parameters: { policyName: `p-${++seq}`, effect: "EFFECT_ALLOW", condition, notes: "" },
      });
    const tagNames = async () => {
      const res = await stampedPost(
        server.url,
        "/public/v1/query/list_user_tags",
        JSON.stringify({ organizationId: root.organizationId }),
        rootKey,
      );
      assert.equal(res.status, 200, res.text);
      return (res.json.userTags as { tagName: string }[]).map((t) => t.tagName).sort();
    };

    before(async () => {
      inst = await newInstance(engine.name);
      root = await sigilInit(inst, ["--name", "Limits Org"]);
      rootKey = { publicKey: root.apiPublicKey, privateKey: root.apiPrivateKey };
      server = await startServer(inst);
    });

    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    describe("2. nothing before authentication", () => {
      it("an unknown organization and a known one answer an unknown key identically (401 PUBLIC_KEY_NOT_FOUND)", async () => {
        const stranger = newKeyPair();
        const ghost = randomUUID();
        for (const [path, body] of [
          [TAG, (org: string) => tagBody({}, org)],
          [WHOAMI, (org: string) => JSON.stringify({ organizationId: org })],
        ] as const) {
          const known = assertError(
            await stampedPost(server.url, path, body(root.organizationId), stranger),
            401,
            16,
            "PUBLIC_KEY_NOT_FOUND",
          );
          const unknown = assertError(await stampedPost(server.url, path, body(ghost), stranger), 401, 16, "PUBLIC_KEY_NOT_FOUND");
          // A real key of another organization gets the same answer for the ghost, too.
          const real = assertError(await stampedPost(server.url, path, body(ghost), rootKey), 401, 16, "PUBLIC_KEY_NOT_FOUND");
          assert.equal(known.message, UNKNOWN_KEY);
          assert.deepEqual(unknown, known);
          assert.deepEqual(real, known);
        }
      });

      it("an invalid policy expression is not compiled for an unauthenticated caller", async () => {
        const body = policyBody("activity.type == ");
        // Signed by the root key, the expression is checked and refused with its position.
        const checked = assertError(await stampedPost(server.url, POLICY, body, rootKey), 400, 3, "REQUEST_INVALID");
        assert.match(checked.message, /condition:1:/);
        // Without a stamp, with a forged one, or with an unknown key: only the stamp is judged.
        assertError(await rawPost(server.url, POLICY, body), 401, 16, "SIGNATURE_MISSING");
        const forged = decodeStamp(await goodStamp(newKeyPair(), body));
        assertError(
          await rawPost(server.url, POLICY, body, { "X-Stamp": encodeStamp({ ...forged, publicKey: rootKey.publicKey }) }),
          401,
          16,
          "SIGNATURE_INVALID",
        );
        assertError(await stampedPost(server.url, POLICY, body, newKeyPair()), 401, 16, "PUBLIC_KEY_NOT_FOUND");
      });

      it("an invalid body is answered 401, not 400, until the caller is known", async () => {
        const invalidBodies = [
          JSON.stringify({ type: 42, timestampMs: "soon", organizationId: root.organizationId, parameters: [] }),
          JSON.stringify({ organizationId: root.organizationId, parameters: { userTagName: "\u0000" } }),
          JSON.stringify({ organizationId: root.organizationId, type: "ACTIVITY_TYPE_DELETE_USERS", parameters: {} }),
        ];
        for (const body of invalidBodies) {
          assertError(await rawPost(server.url, TAG, body), 401, 16, "SIGNATURE_MISSING");
          assertError(await stampedPost(server.url, TAG, body, newKeyPair()), 401, 16, "PUBLIC_KEY_NOT_FOUND");
          assertError(await stampedPost(server.url, TAG, body, rootKey), 400, 3, "REQUEST_INVALID");
        }
        const query = JSON.stringify({ organizationId: root.organizationId, filterType: "NOPE", filterValue: 7 });
        assertError(await rawPost(server.url, SUBORGS, query), 401, 16, "SIGNATURE_MISSING");
        assertError(await stampedPost(server.url, SUBORGS, query, newKeyPair()), 401, 16, "PUBLIC_KEY_NOT_FOUND");
        assertError(await stampedPost(server.url, SUBORGS, query, rootKey), 400, 3, "REQUEST_INVALID");
        // Malformed JSON under a stamp that does not verify: the signature is judged first.
        assertError(
          await rawPost(server.url, TAG, "{not json", { "X-Stamp": await goodStamp(rootKey, "{other") }),
          401,
          16,
          "SIGNATURE_INVALID",
        );
      });
    });

    describe("3. nesting depth", () => {
      it("a body nested 10,000 levels deep is 401 unstamped and 400 stamped, on submit and query routes", async () => {
        const deepTag = tagBody({ extra: "@" }).replace('"@"', nested(10_000));
        const deepQuery = `{"organizationId":"${root.organizationId}","x":${nested(10_000, "{}")}}`;
        for (const [path, body] of [
          [TAG, deepTag],
          [WHOAMI, deepQuery],
          [SUBORGS, nested(10_000)],
        ] as const) {
          assertError(await rawPost(server.url, path, body), 401, 16, "SIGNATURE_MISSING");
          const e = assertError(await stampedPost(server.url, path, body, rootKey), 400, 3, "REQUEST_INVALID");
          assert.match(e.message, /nested more than 64 levels/);
        }
      });

      it("64 levels are accepted and 65 refused; brackets inside strings do not count", async () => {
        // The body object is level 1 and parameters level 2: 62 more arrays make 64.
        const before = await tagNames();
        const at = await stampedPost(server.url, TAG, tagBody({ extra: "@" }).replace('"@"', nested(62)), rootKey);
        assert.equal(at.status, 200, at.text);
        const over = await stampedPost(server.url, TAG, tagBody({ extra: "@" }).replace('"@"', nested(63)), rootKey);
        assertError(over, 400, 3);
        const inString = await stampedPost(server.url, TAG, tagBody({ extra: `\\"${"[{".repeat(5_000)}\\\\` }), rootKey);
        assert.equal(inString.status, 200, inString.text);
        assert.equal((await tagNames()).length, before.length + 2);
      });
    });

    describe("4. U+0000", () => {
      it("is refused in values and field names, naming the field, and nothing is stored", async () => {
        const before = await tagNames();
        const cases: [string, string, string[]][] = [
          [TAG, tagBody({ userTagName: "nul\u0000tag" }), ["parameters.userTagName"]],
          [TAG, tagBody({ userIds: ["\u0000"] }), ["parameters.userIds[0]"]],
          [TAG, tagBody({ "k\u0000": 1 }), ['parameters["k\\u0000"]']],
          [TAG, tagBody({ dropped: { deep: ["x", "\u0000"] } }), ["parameters.dropped.deep[1]"]],
          [
            "/public/v1/submit/create_users",
            JSON.stringify({
              type: "ACTIVITY_TYPE_CREATE_USERS_V3",
              timestampMs: String(Date.now()),
              organizationId: root.organizationId,
              parameters: {
                users: [{ userName: "a\u0000b", userEmail: "x\u0000@example.com", apiKeys: [], authenticators: [], userTags: [] }],
              },
            }),
            ["parameters.users[0].userName", "parameters.users[0].userEmail"],
          ],
          [SUBORGS, JSON.stringify({ organizationId: root.organizationId, filterType: "NAME", filterValue: "\u0000" }), ["filterValue"]],
          [WHOAMI, JSON.stringify({ organizationId: root.organizationId, "\u0000": "" }), ['["\\u0000"]']],
        ];
        for (const [path, body, fields] of cases) {
          const e = assertError(await stampedPost(server.url, path, body, rootKey), 400, 3, "REQUEST_INVALID");
          assert.deepEqual(violatedFields(e), fields, path);
          assert.match(e.message, /U\+0000/);
        }
        // In organizationId it is simply not an organization id.
        const org = assertError(
          await stampedPost(server.url, WHOAMI, JSON.stringify({ organizationId: `${root.organizationId}\u0000` }), rootKey),
          400,
          3,
        );
        assert.deepEqual(violatedFields(org), ["organizationId"]);
        assert.deepEqual(await tagNames(), before);
        const users = await stampedPost(
          server.url,
          "/public/v1/query/list_users",
          JSON.stringify({ organizationId: root.organizationId }),
          rootKey,
        );
        assert.deepEqual(
          (users.json.users as { userName: string }[]).map((u) => u.userName),
          ["root"],
        );
      });
    });

    describe("4b. unpaired surrogates", () => {
      it("a lone \\ud800 or \\udc00 escape is refused in values and field names, kept fields or dropped ones; a pair is one character", async () => {
        const before = await tagNames();
        // JSON.stringify would escape them itself; written out here as a client could send them.
        const lone = (body: string, esc: string) => body.replace("@@", esc);
        const cases: [string, string, string[]][] = [
          [TAG, lone(tagBody({ userTagName: "@@" }), "\\ud800"), ["parameters.userTagName"]],
          [TAG, lone(tagBody({ userTagName: "x@@" }), "\\udc00"), ["parameters.userTagName"]],
          [TAG, lone(tagBody({ userTagName: "@@" }), "\\udc00\\ud800"), ["parameters.userTagName"]],
          [TAG, lone(tagBody({ dropped: "@@" }), "\\ud800"), ["parameters.dropped"]],
          [TAG, lone(tagBody({ "k@@": 1 }), "\\udfff"), ['parameters["k\\udfff"]']],
          [
            "/public/v1/submit/delete_sub_organization",
            lone(
              JSON.stringify({
                type: "ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION",
                timestampMs: String(Date.now()),
                organizationId: root.organizationId,
                parameters: { userTagName: "@@" },
              }),
              "\\ud800",
            ),
            ["parameters.userTagName"],
          ],
          [WHOAMI, lone(JSON.stringify({ organizationId: root.organizationId, note: "@@" }), "\\ud800"), ["note"]],
        ];
        for (const [path, body, fields] of cases) {
          const e = assertError(await stampedPost(server.url, path, body, rootKey), 400, 3, "REQUEST_INVALID");
          assert.deepEqual(violatedFields(e), fields, `${path} ${body.slice(0, 200)}`);
          assert.match(e.message, /unpaired surrogate/);
        }
        assert.deepEqual(await tagNames(), before);
        const pair = await stampedPost(server.url, TAG, lone(tagBody({ userTagName: "smile @@" }), "\\ud83d\\ude00"), rootKey);
        assert.equal(pair.status, 200, pair.text);
        assert.ok((await tagNames()).includes("smile \u{1F600}"));
      });
    });

    describe("5. prototype names", () => {
      it("list_suborgs refuses every Object.prototype name as a filter type", async () => {
        for (const filterType of PROTOTYPE_NAMES) {
          const e = assertError(
            await stampedPost(
              server.url,
              SUBORGS,
              JSON.stringify({ organizationId: root.organizationId, filterType, filterValue: "x" }),
              rootKey,
            ),
            400,
            3,
            "REQUEST_INVALID",
          );
          assert.match(e.message, /is not a known filter type/, filterType);
          assert.deepEqual(violatedFields(e), ["filterType"]);
        }
      });

      it("a stamp scheme named after an Object.prototype member is malformed (401)", async () => {
        const body = tagBody();
        const good = decodeStamp(await goodStamp(rootKey, body));
        for (const scheme of PROTOTYPE_NAMES) {
          const e = assertError(
            await rawPost(server.url, TAG, body, { "X-Stamp": encodeStamp({ ...good, scheme }) }),
            401,
            16,
            "UNAUTHENTICATED",
          );
          assert.match(e.message, /unsupported signature scheme/, scheme);
        }
      });

      it("policy expressions naming Object.prototype members are refused with a plain message", async () => {
        for (const name of PROTOTYPE_NAMES.filter((n) => /^[A-Za-z_]\w*$/.test(n))) {
          for (const condition of [`activity.${name} == 'x'`, `${name} == 'x'`, `activity.type == 'x' ${name}`]) {
            const e = assertError(await stampedPost(server.url, POLICY, policyBody(condition), rootKey), 400, 3, "REQUEST_INVALID");
            assert.match(e.message, /invalid policy condition: condition:1:\d+: /, condition);
            assert.doesNotMatch(e.message, /function|native code|\[object/, condition);
          }
        }
      });

      it("prototype names as body keys neither pollute nor crash; unknown ones are dropped", async () => {
        const before = await tagNames();
        const name = `proto-${engine.name}`;
        const body = JSON.stringify({
          type: "ACTIVITY_TYPE_CREATE_USER_TAG",
          timestampMs: String(Date.now()),
          organizationId: root.organizationId,
          parameters: { userTagName: name, userIds: [], __proto__: { userTagName: "polluted" }, constructor: { prototype: { x: 1 } } },
        }).replace('"userIds":[]', '"userIds":[],"__proto__":{"userTagName":"polluted"}');
        const res = await stampedPost(server.url, TAG, body, rootKey);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.json.activity.intent.createUserTagIntent, { userTagName: name, userIds: [] });
        assert.deepEqual(await tagNames(), [...before, name].sort());
      });

      it("the server never answered 5xx", async () => {
        assert.doesNotMatch(server.output(), /"internal error"/);
        assert.equal((await stampedPost(server.url, WHOAMI, JSON.stringify({ organizationId: root.organizationId }), rootKey)).status, 200);
      });
    });
  });
}
