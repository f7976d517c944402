// Every request limit of docs/network.md §6.6, tripped once: each answer is a 4xx whose
// message names the field (where there is one) and the limit's number. In-process (the real
// app over SQLite); the limits are schema and pipeline checks, the same on both engines.
import { it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { onSqlite, publicKey, type Harness, type Json, type Res } from "../helpers/inproc.ts";

const ID = "00000000-0000-4000-8000-000000000000";
const user = (over: Json = {}) => ({ userName: "u", apiKeys: [], authenticators: [], oauthProviders: [], userTags: [], ...over });
const key = () => ({ apiKeyName: "k", publicKey: publicKey(), curveType: "API_KEY_CURVE_P256" });
const many = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

interface Limit {
  what: string;
  send: (h: Harness) => Promise<Res>;
  status: number;
  message: RegExp;
  field?: string;
}

const submit = (op: string, type: string, parameters: Json) => (h: Harness) => h.submit(op, type, parameters);

const LIMITS: Limit[] = [
  {
    what: "body size (SIGIL_BODY_LIMIT_BYTES, default 1048576)",
    send: (h) => h.post("/public/v1/submit/create_users", JSON.stringify({ pad: "x".repeat(1024 * 1024) })),
    status: 413,
    message: /at most 1048576 bytes/,
  },
  {
    what: "JSON nesting (64 levels)",
    send: async (h) => {
      const body = `{"organizationId":"${h.root.organizationId}","x":${"[".repeat(65)}${"]".repeat(65)}}`;
      const stamp = await new ApiKeyStamper({ apiPublicKey: h.root.key.publicKey, apiPrivateKey: h.root.key.privateKey }).stamp(body);
      return h.post("/public/v1/query/whoami", body, { [stamp.stampHeaderName]: stamp.stampHeaderValue });
    },
    status: 400,
    message: /more than 64 levels/,
  },
  {
    what: "users per create_users (100)",
    send: submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: many(101, () => user()) }),
    status: 400,
    message: /users must hold 1 to 100/,
    field: "parameters.users",
  },
  {
    what: "API keys per user entry (10)",
    send: submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [user({ apiKeys: many(11, key) })] }),
    status: 400,
    message: /apiKeys must hold at most 10/,
    field: "parameters.users[0].apiKeys",
  },
  {
    what: "API keys per create_api_keys (10)",
    send: submit("create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", { userId: ID, apiKeys: many(11, key) }),
    status: 400,
    message: /apiKeys must hold 1 to 10/,
    field: "parameters.apiKeys",
  },
  {
    what: "tags per user (100)",
    send: submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [user({ userTags: many(101, () => ID) })] }),
    status: 400,
    message: /userTags must hold at most 100/,
    field: "parameters.users[0].userTags",
  },
  {
    what: "users per tag (100)",
    send: submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: "t", userIds: many(101, () => ID) }),
    status: 400,
    message: /userIds must hold at most 100/,
    field: "parameters.userIds",
  },
  {
    what: "user name length (256)",
    send: submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", { users: [user({ userName: "n".repeat(257) })] }),
    status: 400,
    message: /1 to 256 characters/,
    field: "parameters.users[0].userName",
  },
  {
    what: "email length (254)",
    send: submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V4", {
      users: [user({ userEmail: `${"a".repeat(60)}@${"b".repeat(200)}.com` })],
    }),
    status: 400,
    message: /at most 254 characters/,
    field: "parameters.users[0].userEmail",
  },
  {
    what: "policies per create_policies (100)",
    send: submit("create_policies", "ACTIVITY_TYPE_CREATE_POLICIES", {
      policies: many(101, (i) => ({ policyName: `p${i}`, effect: "EFFECT_ALLOW", condition: "true", consensus: "true", notes: "" })),
    }),
    status: 400,
    message: /1 to 100 policies/,
    field: "parameters.policies",
  },
  {
    what: "policy expression length (8192)",
    send: submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
      policyName: "p",
      effect: "EFFECT_ALLOW",
      condition: "true && ".repeat(1100) + "true",
      notes: "",
    }),
    status: 400,
    message: /at most 8192 characters/,
    field: "parameters.condition",
  },
  {
    what: "ids per delete (100)",
    send: submit("delete_users", "ACTIVITY_TYPE_DELETE_USERS", { userIds: many(101, () => ID) }),
    status: 400,
    message: /userIds must hold 1 to 100/,
    field: "parameters.userIds",
  },
  {
    what: "IP allowlist rules submitted (40)",
    send: submit("set_ip_allowlist", "ACTIVITY_TYPE_SET_IP_ALLOWLIST", { rules: many(41, () => ({ cidr: "10.0.0.0/24" })) }),
    status: 400,
    message: /rules must hold at most 40/,
    field: "parameters.rules",
  },
  {
    what: "distinct IP rules per family (10)",
    send: submit("set_ip_allowlist", "ACTIVITY_TYPE_SET_IP_ALLOWLIST", { rules: many(11, (i) => ({ cidr: `2001:db8:${i}::/48` })) }),
    status: 400,
    message: /at most 10 distinct IPv6 rules/,
    field: "parameters.rules[10].cidr",
  },
  {
    what: "IP rule label length (256)",
    send: submit("set_ip_allowlist", "ACTIVITY_TYPE_SET_IP_ALLOWLIST", { rules: [{ cidr: "10.0.0.0/24", label: "l".repeat(257) }] }),
    status: 400,
    message: /at most 256 characters/,
    field: "parameters.rules[0].label",
  },
  {
    what: "page size (100)",
    send: (h) => h.query("list_activities", { paginationOptions: { limit: "101" } }),
    status: 400,
    message: /between 1 and 100/,
  },
];

onSqlite("request limits", (h) => {
  for (const limit of LIMITS) {
    it(`${limit.what}: ${limit.status}, naming the number${limit.field ? ` and ${limit.field}` : ""}`, async () => {
      const res = await limit.send(h());
      assert.equal(res.status, limit.status, JSON.stringify(res.json).slice(0, 400));
      assert.match(res.json.message, limit.message);
      if (limit.field) {
        const fields = (res.json.details as Json[]).flatMap((d) => (d.fieldViolations as Json[] | undefined)?.map((v) => v.field) ?? []);
        assert.ok(fields.includes(limit.field), `${limit.field} not in ${JSON.stringify(fields)}`);
      }
    });
  }
});
