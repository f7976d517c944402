import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  completed,
  failsWith,
  invalidRequest,
  notFound,
  perEngine,
  precondition,
  stampedFrom,
  type Creds,
  type Harness,
  type Json,
  type Res,
} from "../helpers/inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { setIpAllowlist } from "../../src/activities/ip-allowlist/set_ip_allowlist.ts";

const OP = "set_ip_allowlist";
const TYPE = "ACTIVITY_TYPE_SET_IP_ALLOWLIST";

const from = stampedFrom;
const whoamiFrom = (h: Harness, address: string, as: Creds) =>
  from(h, address, as, "/public/v1/query/whoami", { organizationId: as.organizationId });
const denied = (res: Res, address: string) =>
  failsWith(res, 403, 7, "FORBIDDEN", new RegExp(`IP address ${address.replace(/[.:]/g, "\\$&")} `));
const set = (h: Harness, as: Creds, parameters: Json) => h.submit(OP, TYPE, parameters, { as });
const get = async (h: Harness, as: Creds, publicKey?: string) =>
  (await h.query("get_ip_allowlist", publicKey ? { publicKey } : {}, { as })).json.allowlist as Json;
const activityCount = async (h: Harness, as: Creds) =>
  ((await h.query("list_activities", { paginationOptions: { limit: "100" } }, { as })).json.activities as Json[]).length;

perEngine("set_ip_allowlist", (h) => {
  it("normalises rules, drops duplicates keeping the first label, and is disabled until enabled", async () => {
    const org = await h().newOrg("normalise");
    completed(
      await set(h(), org, {
        rules: [
          { cidr: "192.168.1.100/24", label: "office" },
          { cidr: "10.0.0.1" },
          { cidr: "2001:DB8:0:0::1/64", label: "v6" },
          { cidr: "192.168.1.7/24", label: "duplicate" },
          { cidr: "::ffff:172.16.5.4/116", label: "mapped" },
          { cidr: "2001:db8:0:0:0:0:0:1", label: "host" },
        ],
      }),
      "setIpAllowlistResult",
    );
    const list = await get(h(), org);
    assert.equal(list.organizationId, org.organizationId);
    assert.equal(list.enabled, false);
    assert.equal(list.onEvaluationError, "DENY");
    assert.deepEqual(
      list.rules.map((r: Json) => [r.cidr, r.label]),
      [
        ["192.168.1.0/24", "office"],
        ["10.0.0.1/32", ""],
        ["2001:db8::/64", "v6"],
        ["172.16.0.0/20", "mapped"],
        ["2001:db8::1/128", "host"],
      ],
    );
    assert.match(list.rules[0].createdAt, /^\d{13}$/);
    // Not enabled: nothing is enforced, from anywhere.
    assert.equal((await whoamiFrom(h(), "203.0.113.9", org)).status, 200);
  });

  it("enabled: an address outside the rules is refused 403 before authorization and creates no activity", async () => {
    const org = await h().newOrg("enforce");
    completed(await set(h(), org, { enabled: true, rules: [{ cidr: "127.0.0.1/32", label: "me" }] }), setIpAllowlist);
    assert.equal((await whoamiFrom(h(), "127.0.0.1", org)).status, 200);
    denied(await whoamiFrom(h(), "127.0.0.2", org), "127.0.0.2");
    // IPv4-mapped IPv6 peer is the IPv4 address.
    assert.equal((await whoamiFrom(h(), "::ffff:127.0.0.1", org)).status, 200);
    const before = await activityCount(h(), org);
    const body = {
      type: "ACTIVITY_TYPE_CREATE_USER_TAG",
      timestampMs: String(Date.now()),
      organizationId: org.organizationId,
      parameters: { userTagName: "t", userIds: [] },
    };
    denied(await from(h(), "127.0.0.2", org, "/public/v1/submit/create_user_tag", body), "127.0.0.2");
    // Refused before validation: even an invalid body is answered 403, not 400.
    denied(await from(h(), "127.0.0.2", org, "/public/v1/submit/create_user_tag", { ...body, parameters: {} }), "127.0.0.2");
    assert.equal(await activityCount(h(), org), before);
  });

  it("IPv6 rules and CIDR edges: /48 admits its range, not its neighbour", async () => {
    const org = await h().newOrg("v6");
    completed(
      await set(h(), org, { enabled: true, rules: [{ cidr: "127.0.0.1" }, { cidr: "2001:db8:abcd::/48" }, { cidr: "198.51.96.0/20" }] }),
      setIpAllowlist,
    );
    assert.equal((await whoamiFrom(h(), "2001:db8:abcd:ffff:ffff:ffff:ffff:ffff", org)).status, 200);
    denied(await whoamiFrom(h(), "2001:db8:abce::", org), "2001:db8:abce::");
    assert.equal((await whoamiFrom(h(), "198.51.111.255", org)).status, 200);
    denied(await whoamiFrom(h(), "198.51.112.0", org), "198.51.112.0");
    denied(await whoamiFrom(h(), "198.51.95.255", org), "198.51.95.255");
  });

  it("enabled with zero rules blocks everyone: refused as a self-lockout (400), nothing changes", async () => {
    const org = await h().newOrg("zero");
    invalidRequest(await set(h(), org, { enabled: true, rules: [] }), /would refuse the request making it: IP address 127\.0\.0\.1/, [
      "parameters.rules",
    ]);
    invalidRequest(await set(h(), org, { enabled: true, rules: [{ cidr: "10.0.0.0/20" }] }), /would refuse the request making it/);
    const list = await get(h(), org);
    assert.equal(list.enabled, false);
    assert.deepEqual(list.rules, []);
  });

  it("set replaces the whole list; absent rules keep them; enabled false switches enforcement off", async () => {
    const org = await h().newOrg("replace");
    completed(
      await set(h(), org, { enabled: true, rules: [{ cidr: "127.0.0.0/24", label: "a" }, { cidr: "10.0.0.0/20" }] }),
      setIpAllowlist,
    );
    completed(await set(h(), org, { rules: [{ cidr: "127.0.0.1", label: "b" }] }), setIpAllowlist);
    let list = await get(h(), org);
    assert.deepEqual(
      list.rules.map((r: Json) => r.cidr),
      ["127.0.0.1/32"],
    );
    assert.equal(list.enabled, true);
    denied(await whoamiFrom(h(), "127.0.0.3", org), "127.0.0.3");
    completed(await set(h(), org, { enabled: false, onEvaluationError: "ALLOW" }), setIpAllowlist);
    list = await get(h(), org);
    assert.deepEqual(
      list.rules.map((r: Json) => r.cidr),
      ["127.0.0.1/32"],
    );
    assert.equal(list.enabled, false);
    assert.equal(list.onEvaluationError, "ALLOW");
    assert.equal((await whoamiFrom(h(), "127.0.0.3", org)).status, 200);
  });

  it("a key's list overrides the organization's while it is enabled; inert when it is not", async () => {
    const org = await h().newOrg("keys");
    const [user] = await addUsersWithKeys(h(), 1, org);
    completed(await set(h(), org, { publicKey: user!.key.publicKey, rules: [{ cidr: "127.0.0.2/32", label: "user" }] }), setIpAllowlist);
    const keyList = await get(h(), org, user!.key.publicKey);
    assert.equal(keyList.publicKey, user!.key.publicKey);
    assert.equal(keyList.enabled, undefined);
    assert.deepEqual(
      keyList.rules.map((r: Json) => [r.cidr, r.label]),
      [["127.0.0.2/32", "user"]],
    );
    // The organization's list is not enabled: the key list is not evaluated.
    assert.equal((await whoamiFrom(h(), "127.0.0.1", user!)).status, 200);
    completed(await set(h(), org, { enabled: true, rules: [{ cidr: "127.0.0.1/32" }] }), setIpAllowlist);
    assert.equal((await whoamiFrom(h(), "127.0.0.2", user!)).status, 200);
    denied(await whoamiFrom(h(), "127.0.0.1", user!), "127.0.0.1");
    // The root key has no list of its own: the organization's applies.
    assert.equal((await whoamiFrom(h(), "127.0.0.1", org)).status, 200);
    denied(await whoamiFrom(h(), "127.0.0.2", org), "127.0.0.2");
    // A key list with no rules falls back to the organization's.
    completed(await set(h(), org, { publicKey: user!.key.publicKey, rules: [] }), setIpAllowlist);
    assert.equal((await whoamiFrom(h(), "127.0.0.1", user!)).status, 200);
    denied(await whoamiFrom(h(), "127.0.0.2", user!), "127.0.0.2");
  });

  it("a caller's own key list that would exclude it is refused (400)", async () => {
    const org = await h().newOrg("own-key");
    completed(await set(h(), org, { enabled: true, rules: [{ cidr: "127.0.0.1/32" }] }), setIpAllowlist);
    invalidRequest(
      await set(h(), org, { publicKey: org.key.publicKey, rules: [{ cidr: "10.0.0.0/24" }] }),
      /would refuse the request making it/,
    );
    assert.deepEqual((await get(h(), org, org.key.publicKey)).rules, []);
  });

  const refused: [string, Json, RegExp, string[]][] = [
    [
      "an invalid rule, named by its index",
      { rules: [{ cidr: "10.0.0.0/24" }, { cidr: "10.0.1.0/24" }, { cidr: "10.0.0.300" }] },
      /^rules\[2\]: "10\.0\.0\.300" is not an IPv4 or IPv6 address/,
      ["parameters.rules[2].cidr"],
    ],
    [
      "an IPv4 prefix broader than /20",
      { rules: [{ cidr: "10.0.0.0/19" }] },
      /rules\[0\]: .*IPv4 prefixes must be from \/20 to \/32/,
      ["parameters.rules[0].cidr"],
    ],
    [
      "an IPv6 prefix broader than /48",
      { rules: [{ cidr: "2001:db8::/47" }] },
      /rules\[0\]: .*IPv6 prefixes must be from \/48 to \/128/,
      ["parameters.rules[0].cidr"],
    ],
    [
      "a prefix past the address width",
      { rules: [{ cidr: "10.0.0.0/33" }] },
      /prefix length must be a number from 0 to 32/,
      ["parameters.rules[0].cidr"],
    ],
    ["a zone id", { rules: [{ cidr: "fe80::1%eth0" }] }, /not an IPv4 or IPv6 address/, ["parameters.rules[0].cidr"]],
    [
      "11 distinct IPv4 rules",
      { rules: Array.from({ length: 11 }, (_, i) => ({ cidr: `10.0.${i}.0/24` })) },
      /rules\[10\]: at most 10 distinct IPv4 rules per list/,
      ["parameters.rules[10].cidr"],
    ],
    [
      "41 submitted rules",
      { rules: Array.from({ length: 41 }, () => ({ cidr: "10.0.0.0/24" })) },
      /rules must hold at most 40 items/,
      ["parameters.rules"],
    ],
    [
      "a label over 256 characters",
      { rules: [{ cidr: "10.0.0.0/24", label: "x".repeat(257) }] },
      /at most 256 characters/,
      ["parameters.rules[0].label"],
    ],
    ["an unknown onEvaluationError", { onEvaluationError: "MAYBE" }, /ALLOW or DENY/, ["parameters.onEvaluationError"]],
    [
      "enabled on a key's list",
      { publicKey: generateP256KeyPair().publicKey, enabled: true },
      /enabled applies to the organization's list only/,
      ["parameters.enabled"],
    ],
    ["a malformed publicKey", { publicKey: "zz" }, /public key/, ["parameters.publicKey"]],
  ];
  for (const [what, parameters, message, fields] of refused) {
    it(`refuses ${what} (400)`, async () => {
      invalidRequest(await set(h(), h().root, parameters), message, fields);
    });
  }

  it("11 rules of which 2 are duplicates are 9 distinct: accepted", async () => {
    const org = await h().newOrg("dups");
    const rules = [
      ...Array.from({ length: 9 }, (_, i) => ({ cidr: `10.0.${i * 16}.0/20` })),
      { cidr: "10.0.0.5/20" },
      { cidr: "10.0.16.0/20" },
    ];
    completed(await set(h(), org, { rules }), setIpAllowlist);
    assert.equal((await get(h(), org)).rules.length, 9);
  });

  it("an API key of another organization is 404", async () => {
    const other = await h().newOrg("other");
    notFound(await set(h(), h().root, { publicKey: other.key.publicKey, rules: [] }), /publicKey: no API key/);
  });

  it("sub-organizations cannot set lists (400 FAILED_PRECONDITION)", async () => {
    const key = generateP256KeyPair();
    const res = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
      subOrganizationName: "sub",
      rootQuorumThreshold: 1,
      rootUsers: [
        {
          userName: "s",
          apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
          authenticators: [],
          oauthProviders: [],
        },
      ],
    });
    const { subOrganizationId, rootUserIds } = completed(res, "createSubOrganizationResultV8");
    const sub: Creds = { organizationId: subOrganizationId, userId: rootUserIds[0], key };
    precondition(await set(h(), sub, { enabled: true, rules: [{ cidr: "127.0.0.1" }] }), /only be configured on a root organization/);
    assert.deepEqual((await get(h(), sub)).rules, []);
  });
});
