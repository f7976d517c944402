import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, failsWith, forbidden, notFound, perEngine, type Json } from "../helpers/inproc.ts";
import { activitiesOf, disable, enable, enabledOrg, getConfig, proxyCreds, subOrgRoot, update } from "../helpers/auth-proxy.ts";

const OP = "disable_auth_proxy";
const TYPE = "ACTIVITY_TYPE_DISABLE_AUTH_PROXY";

perEngine(OP, (h) => {
  it("keeps the configuration (enabled: false, same id, key and settings) and refuses the proxy key (401)", async () => {
    const { org, config } = await enabledOrg(h(), "disable-basic");
    completed(await update(h(), org, { otpLength: 7 }), "updateAuthProxyConfigResult");
    const proxy = await proxyCreds(h(), org.organizationId);
    assert.equal((await h().query("list_suborgs", {}, { as: proxy })).status, 200);
    const res = await h().submit(OP, TYPE, {}, { as: org });
    assert.deepEqual(completed(res, "disableAuthProxyResult"), {});
    const got = (await getConfig(h(), org)).json.authProxyConfig as Json;
    assert.deepEqual([got.configId, got.publicKey, got.enabled, got.otpLength], [config.configId, config.publicKey, false, 7]);
    failsWith(await h().query("list_suborgs", {}, { as: proxy }), 401, 16, "UNAUTHENTICATED", /auth proxy .* disabled/);
    failsWith(
      await h().submit(
        "init_otp",
        "ACTIVITY_TYPE_INIT_OTP_V3",
        { otpType: "OTP_TYPE_EMAIL", contact: "a@example.com", appName: "x" },
        { as: proxy },
      ),
      401,
      16,
      "UNAUTHENTICATED",
    );
    // Disabling twice is fine; settings may still be changed while disabled.
    completed(await disable(h(), org), "disableAuthProxyResult");
    completed(await update(h(), org, { otpLength: 8 }), "updateAuthProxyConfigResult");
    completed(await enable(h(), org), "enableAuthProxyResult");
    assert.equal((await h().query("list_suborgs", {}, { as: proxy })).status, 200);
    assert.equal((await getConfig(h(), org)).json.authProxyConfig.otpLength, 8);
  });

  it("with no configuration: 404", async () => {
    const org = await h().newOrg("disable-none");
    notFound(await disable(h(), org), /no auth proxy configuration/);
  });

  it("a sub-organization is refused (403, code 7), nothing recorded", async () => {
    const { org } = await enabledOrg(h(), "disable-parent");
    const subRoot = await subOrgRoot(h(), org);
    forbidden(await disable(h(), subRoot), /only by a top-level organization/);
    assert.deepEqual(await activitiesOf(h(), subRoot, /AUTH_PROXY/), []);
    assert.equal((await getConfig(h(), org)).json.authProxyConfig.enabled, true);
  });
});
