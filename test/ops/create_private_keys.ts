import { it } from "node:test";
import assert from "node:assert/strict";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { addressOf } from "../../src/wallets/derivation.ts";
import { completed, conflict, invalidRequest, notFound, perEngine, UUID } from "../helpers/inproc.ts";
import { openedPrivateKey } from "../helpers/keys-and-wallets.ts";

const OP = "create_private_keys";
const TYPE = "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2";

perEngine("create_private_keys", (h) => {
  it("creates keys sealed at rest whose addresses derive from the sealed key, in request order", async () => {
    const res = await h().submit(OP, TYPE, {
      privateKeys: [
        {
          privateKeyName: "eth",
          curve: "CURVE_SECP256K1",
          privateKeyTags: [],
          addressFormats: ["ADDRESS_FORMAT_ETHEREUM", "ADDRESS_FORMAT_COMPRESSED", "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH"],
        },
        { privateKeyName: "sol", curve: "CURVE_ED25519", privateKeyTags: [], addressFormats: ["ADDRESS_FORMAT_SOLANA"] },
        { privateKeyName: "bare", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: [] },
      ],
    });
    const { privateKeys } = completed(res, "createPrivateKeysResultV2");
    assert.equal(privateKeys.length, 3);
    for (const k of privateKeys) assert.match(k.privateKeyId, UUID);
    const [eth, sol, bare] = privateKeys;
    assert.deepEqual(
      eth.addresses.map((a: { format: string }) => a.format),
      ["ADDRESS_FORMAT_ETHEREUM", "ADDRESS_FORMAT_COMPRESSED", "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH"],
    );
    assert.deepEqual(bare.addresses, []);
    // Independently: the sealed key derives the addresses.
    const ethKey = await openedPrivateKey(h(), eth.privateKeyId);
    assert.equal(ethKey.length, 32);
    const ethPub = secp256k1.getPublicKey(ethKey, true);
    assert.equal(
      eth.addresses[0].address,
      addressOf({ curve: "CURVE_SECP256K1", publicKey: ethPub, privateKey: ethKey }, "ADDRESS_FORMAT_ETHEREUM"),
    );
    assert.equal(eth.addresses[1].address, Buffer.from(ethPub).toString("hex"));
    const solKey = await openedPrivateKey(h(), sol.privateKeyId);
    assert.equal(sol.addresses[0].address, base58.encode(ed25519.getPublicKey(solKey)));
    // Sealed at rest; the key is not in the activity.
    const row = await h()
      .service.store.db.selectFrom("private_keys")
      .selectAll()
      .where("id", "=", eth.privateKeyId)
      .executeTakeFirstOrThrow();
    assert.match(row.key_sealed, /^sgl1\./);
    const hex = Buffer.from(ethKey).toString("hex");
    assert.ok(!row.key_sealed.includes(hex));
    const stored = await h()
      .service.store.db.selectFrom("activities")
      .select(["intent", "result"])
      .where("id", "=", res.json.activity.id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(stored).includes(hex) && !JSON.stringify(res.json).includes(hex));
    // The sealed key is bound to its id: another key's aad does not open it.
    await assert.rejects(() => h().service.masterKey.open(row.key_sealed, `private-key:${sol.privateKeyId}`));
  });

  it("a format the curve does not define is 400 naming it; a repeated or taken name 409; an unknown tag 404", async () => {
    invalidRequest(
      await h().submit(OP, TYPE, {
        privateKeys: [{ privateKeyName: "x", curve: "CURVE_ED25519", privateKeyTags: [], addressFormats: ["ADDRESS_FORMAT_ETHEREUM"] }],
      }),
      /not defined for CURVE_ED25519/,
      ["parameters.privateKeys[0].addressFormats[0]"],
    );
    invalidRequest(
      await h().submit(OP, TYPE, { privateKeys: [{ privateKeyName: "x", curve: "CURVE_P256", privateKeyTags: [], addressFormats: [] }] }),
      /curve/,
    );
    invalidRequest(await h().submit(OP, TYPE, { privateKeys: [] }), /privateKeys/);
    const k = { privateKeyName: "dup", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: [] };
    conflict(await h().submit(OP, TYPE, { privateKeys: [k, k] }), /same name/);
    completed(await h().submit(OP, TYPE, { privateKeys: [k] }), "createPrivateKeysResultV2");
    conflict(await h().submit(OP, TYPE, { privateKeys: [k] }), /already exists/);
    notFound(
      await h().submit(OP, TYPE, {
        privateKeys: [{ ...k, privateKeyName: "tagged", privateKeyTags: ["00000000-0000-4000-8000-000000000000"] }],
      }),
      /no private key tag/,
    );
  });

  it("through the official SDK (createPrivateKeys)", async () => {
    const res = await (
      await h().sdk()
    ).createPrivateKeys({
      privateKeys: [
        { privateKeyName: "sdk key", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: ["ADDRESS_FORMAT_ETHEREUM"] },
      ],
    });
    assert.equal(res.privateKeys.length, 1);
    assert.match(res.privateKeys[0]!.addresses![0]!.address!, /^0x[0-9a-fA-F]{40}$/);
  });
});
