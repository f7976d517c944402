import { it } from "node:test";
import assert from "node:assert/strict";
import { completed, invalidRequest, notFound, perEngine } from "../helpers/inproc.ts";
import { newPrivateKey } from "../helpers/keys-and-wallets.ts";

const OP = "delete_private_keys";
const TYPE = "ACTIVITY_TYPE_DELETE_PRIVATE_KEYS";

perEngine("delete_private_keys", (h) => {
  it("deletes keys with their addresses and tags (deleteWithoutExport for keys never exported); the key no longer signs", async () => {
    const k = await newPrivateKey(h(), "CURVE_SECP256K1", ["ADDRESS_FORMAT_ETHEREUM"]);
    completed(
      await h().submit("create_private_key_tag", "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG", {
        privateKeyTagName: `t-${Date.now()}`,
        privateKeyIds: [k.privateKeyId],
      }),
      "createPrivateKeyTagResult",
    );
    invalidRequest(await h().submit(OP, TYPE, { privateKeyIds: [k.privateKeyId] }), /not been exported/, [
      "parameters.deleteWithoutExport",
    ]);
    notFound(
      await h().submit(OP, TYPE, { privateKeyIds: [k.privateKeyId, "00000000-0000-4000-8000-000000000000"], deleteWithoutExport: true }),
      /privateKeyIds\[1\]/,
    );
    assert.equal((await h().query("get_private_key", { privateKeyId: k.privateKeyId })).status, 200);
    assert.deepEqual(
      completed(await h().submit(OP, TYPE, { privateKeyIds: [k.privateKeyId], deleteWithoutExport: true }), "deletePrivateKeysResult"),
      { privateKeyIds: [k.privateKeyId] },
    );
    notFound(await h().query("get_private_key", { privateKeyId: k.privateKeyId }), /no private key/);
    const db = h().service.store.db;
    assert.deepEqual(
      await db.selectFrom("private_key_addresses").select("address").where("private_key_id", "=", k.privateKeyId).execute(),
      [],
    );
    assert.deepEqual(
      await db.selectFrom("private_key_tag_members").select("tag_id").where("private_key_id", "=", k.privateKeyId).execute(),
      [],
    );
    const sign = await h().submit("sign_raw_payload", "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", {
      signWith: k.addresses[0]!.address,
      payload: "ab",
      encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
      hashFunction: "HASH_FUNCTION_KECCAK256",
    });
    notFound(sign, /no wallet account, private key/);
  });
});
