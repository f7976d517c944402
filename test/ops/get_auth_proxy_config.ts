import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, notFound, perEngine, UUID, type Json } from "../helpers/inproc.ts";
import { disable, enabledOrg, getConfig, subOrgRoot, update } from "../helpers/auth-proxy.ts";

const OP = "get_auth_proxy_config";

perEngine(OP, (h) => {
  it("answers AuthProxyConfigView: ids, enabled, proxy user, public key, settings; never the private key", async () => {
    const { org, userId } = await enabledOrg(h(), "get-basic");
    completed(
      await update(h(), org, { allowedOrigins: ["https://a.example.com"], sessionExpirationSeconds: 600 }),
      "updateAuthProxyConfigResult",
    );
    const res = await h().query(OP, {}, { as: org });
    assert.equal(res.status, 200);
    const c = res.json.authProxyConfig as Json;
    assert.match(c.configId, UUID);
    assert.equal(c.organizationId, org.organizationId);
    assert.equal(c.userId, userId);
    assert.equal(c.enabled, true);
    assert.deepEqual(c.allowedOrigins, ["https://a.example.com"]);
    assert.equal(c.sessionExpirationSeconds, 600);
    assert.ok(!Number.isNaN(Date.parse(c.createdAt)) && !Number.isNaN(Date.parse(c.updatedAt)));
    assert.deepEqual(
      Object.keys(c).filter((k) => /private|sealed|secret/i.test(k)),
      [],
    );
    assert.equal(JSON.stringify(c).includes("sgl1."), false);
  });

  it("a disabled configuration is answered with enabled: false", async () => {
    const { org } = await enabledOrg(h(), "get-disabled");
    completed(await disable(h(), org), "disableAuthProxyResult");
    assert.equal((await getConfig(h(), org)).json.authProxyConfig.enabled, false);
  });

  it("none: 404 (code 5)", async () => {
    const org = await h().newOrg("get-none");
    notFound(await h().query(OP, {}, { as: org }), /no auth proxy configuration/);
  });

  it("a sub-organization has none; its user cannot read the parent's", async () => {
    const { org } = await enabledOrg(h(), "get-parent");
    const subRoot = await subOrgRoot(h(), org);
    notFound(await h().query(OP, {}, { as: subRoot }));
    assert.notEqual((await h().query(OP, {}, { as: subRoot, organizationId: org.organizationId })).status, 200);
  });
});
