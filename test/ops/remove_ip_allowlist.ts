import { it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  failsWith,
  invalidRequest,
  notFound,
  perEngine,
  type Creds,
  type Harness,
  type Json,
  type Res,
} from "../helpers/inproc.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { removeIpAllowlist } from "../../src/activities/ip-allowlist/remove_ip_allowlist.ts";
import { setIpAllowlist } from "../../src/activities/ip-allowlist/set_ip_allowlist.ts";

const OP = "remove_ip_allowlist";
const TYPE = "ACTIVITY_TYPE_REMOVE_IP_ALLOWLIST";

async function whoamiFrom(h: Harness, address: string, as: Creds): Promise<Res> {
  const text = JSON.stringify({ organizationId: as.organizationId });
  const stamp = await new ApiKeyStamper({ apiPublicKey: as.key.publicKey, apiPrivateKey: as.key.privateKey }).stamp(text);
  const r = await h.app.inject({
    method: "POST",
    url: "/public/v1/query/whoami",
    payload: text,
    remoteAddress: address,
    headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
  });
  return { status: r.statusCode, json: JSON.parse(r.body) as Json };
}
const denied = (res: Res) => failsWith(res, 403, 7, "FORBIDDEN", /not allowed by the IP allowlist/);
const set = (h: Harness, as: Creds, parameters: Json) => h.submit("set_ip_allowlist", "ACTIVITY_TYPE_SET_IP_ALLOWLIST", parameters, { as });
const remove = (h: Harness, as: Creds, parameters: Json = {}) => h.submit(OP, TYPE, parameters, { as });
const get = async (h: Harness, as: Creds, publicKey?: string) =>
  (await h.query("get_ip_allowlist", publicKey ? { publicKey } : {}, { as })).json.allowlist as Json;

perEngine("remove_ip_allowlist", (h) => {
  it("without publicKey: the organization's list and rules go, and every address may call again", async () => {
    const org = await h().newOrg("remove-org");
    completed(await set(h(), org, { enabled: true, rules: [{ cidr: "127.0.0.1/32" }] }), setIpAllowlist);
    denied(await whoamiFrom(h(), "192.0.2.1", org));
    assert.deepEqual(completed(await remove(h(), org), removeIpAllowlist), {});
    assert.equal((await whoamiFrom(h(), "192.0.2.1", org)).status, 200);
    const list = await get(h(), org);
    assert.deepEqual(list.rules, []);
    assert.equal(list.enabled, false);
  });

  it("publicKey: null is the organization's list too", async () => {
    const org = await h().newOrg("remove-null");
    completed(await set(h(), org, { enabled: true, rules: [{ cidr: "127.0.0.1/32" }] }), setIpAllowlist);
    completed(await remove(h(), org, { publicKey: null }), removeIpAllowlist);
    assert.equal((await whoamiFrom(h(), "192.0.2.1", org)).status, 200);
  });

  it("with publicKey: that key falls back to the organization's list; the organization's stays", async () => {
    const org = await h().newOrg("remove-key");
    const [user] = await addUsersWithKeys(h(), 1, org);
    completed(await set(h(), org, { enabled: true, rules: [{ cidr: "127.0.0.1/32" }] }), setIpAllowlist);
    completed(await set(h(), org, { publicKey: user!.key.publicKey, rules: [{ cidr: "127.0.0.2/32" }] }), setIpAllowlist);
    assert.equal((await whoamiFrom(h(), "127.0.0.2", user!)).status, 200);
    completed(await remove(h(), org, { publicKey: user!.key.publicKey }), removeIpAllowlist);
    denied(await whoamiFrom(h(), "127.0.0.2", user!));
    assert.equal((await whoamiFrom(h(), "127.0.0.1", user!)).status, 200);
    assert.deepEqual((await get(h(), org, user!.key.publicKey)).rules, []);
    assert.equal((await get(h(), org)).rules.length, 1);
  });

  it("removing the caller's own key list when the organization's would exclude it is refused (400)", async () => {
    const org = await h().newOrg("remove-self");
    // The root key's own list admits 127.0.0.1; the organization's list then moves elsewhere.
    completed(await set(h(), org, { enabled: true, rules: [{ cidr: "127.0.0.1/32" }] }), setIpAllowlist);
    completed(
      await set(h(), org, { publicKey: org.key.publicKey, rules: [{ cidr: "127.0.0.1/32" }, { cidr: "10.0.0.0/24" }] }),
      setIpAllowlist,
    );
    completed(await set(h(), org, { rules: [{ cidr: "10.9.0.0/24" }] }), setIpAllowlist);
    invalidRequest(await remove(h(), org, { publicKey: org.key.publicKey }), /would refuse the request making it/, [
      "parameters.publicKey",
    ]);
    assert.equal((await get(h(), org, org.key.publicKey)).rules.length, 2);
    assert.equal((await whoamiFrom(h(), "127.0.0.1", org)).status, 200);
  });

  it("removing a list that does not exist succeeds; the same body twice is one activity", async () => {
    const org = await h().newOrg("remove-none");
    completed(await remove(h(), org), removeIpAllowlist);
    await assertIdempotent(h(), OP, TYPE, {});
  });

  it("a key of another organization is 404; a malformed key is 400", async () => {
    notFound(await remove(h(), h().root, { publicKey: generateP256KeyPair().publicKey }), /publicKey: no API key/);
    invalidRequest(await remove(h(), h().root, { publicKey: "xyz" }), /public key/, ["parameters.publicKey"]);
  });
});
