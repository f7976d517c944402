import { it } from "node:test";
import assert from "node:assert/strict";
import { addUsersWithKeys, completed, invalidRequest, perEngine, type Json } from "../helpers/inproc.ts";
import { setIpAllowlist } from "../../src/activities/ip-allowlist/set_ip_allowlist.ts";
import { createSubOrganizationV8 } from "../../src/activities/organizations/create_sub_organization.ts";

const OP = "get_ip_allowlist";

perEngine("get_ip_allowlist", (h) => {
  it("an organization that never had a list: empty rules, disabled, DENY (not 404)", async () => {
    const org = await h().newOrg("get-empty");
    const res = await h().query(OP, {}, { as: org });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(res.json, { allowlist: { organizationId: org.organizationId, rules: [], enabled: false, onEvaluationError: "DENY" } });
  });

  it("the organization's list and a key's list, each with its own fields, through the official SDK", async () => {
    const org = await h().newOrg("get-lists");
    const [user] = await addUsersWithKeys(h(), 1, org);
    const submit = (parameters: Json) => h().submit("set_ip_allowlist", "ACTIVITY_TYPE_SET_IP_ALLOWLIST", parameters, { as: org });
    completed(
      await submit({ enabled: true, onEvaluationError: "ALLOW", rules: [{ cidr: "127.0.0.1", label: "loopback" }, { cidr: "::1" }] }),
      setIpAllowlist,
    );
    completed(
      await submit({ publicKey: user!.key.publicKey.toUpperCase(), rules: [{ cidr: "2001:db8::/48", label: "v6" }] }),
      setIpAllowlist,
    );
    const sdk = await h().sdk(org);
    const orgList = (await sdk.getIpAllowlist({ organizationId: org.organizationId })).allowlist;
    assert.equal(orgList.enabled, true);
    assert.equal(orgList.onEvaluationError, "ALLOW");
    assert.equal(orgList.publicKey, undefined);
    assert.deepEqual(
      orgList.rules.map((r) => [r.cidr, r.label]),
      [
        ["127.0.0.1/32", "loopback"],
        ["::1/128", ""],
      ],
    );
    const keyList = (await sdk.getIpAllowlist({ organizationId: org.organizationId, publicKey: user!.key.publicKey })).allowlist;
    assert.equal(keyList.publicKey, user!.key.publicKey);
    assert.equal(keyList.enabled, undefined);
    assert.deepEqual(
      keyList.rules.map((r) => r.cidr),
      ["2001:db8::/48"],
    );
    // Another key with no list: empty rules.
    const other = (await h().query(OP, { publicKey: org.key.publicKey }, { as: org })).json.allowlist;
    assert.deepEqual(other.rules, []);
  });

  it("a parent reads its sub-organization's (always empty) list", async () => {
    const res = await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
      subOrganizationName: "sub",
      rootQuorumThreshold: 1,
      rootUsers: [{ userName: "s", apiKeys: [], authenticators: [], oauthProviders: [] }],
    });
    const { subOrganizationId } = completed(res, createSubOrganizationV8);
    const list = (await h().query(OP, { organizationId: subOrganizationId })).json.allowlist;
    assert.deepEqual(list.rules, []);
    assert.equal(list.organizationId, subOrganizationId);
  });

  it("a malformed publicKey is 400 naming the field", async () => {
    invalidRequest(await h().query(OP, { publicKey: "nothex" }), /public key/, ["publicKey"]);
  });
});
