// import_private_key (docs/export-import.md §3.5): a raw key encrypted by the SDK's
// encryptPrivateKeyToBundle becomes a private key (imported: true) with the known addresses;
// a target is used once.
import { it } from "node:test";
import assert from "node:assert/strict";
import { encryptPrivateKeyToBundle } from "@turnkey/crypto";
import { completed, invalidRequest, notFound, perEngine, type Harness } from "../helpers/inproc.ts";
import { bundleSigner, initImport, initKeyImport, openedPrivateKey } from "../helpers/keys-and-wallets.ts";

const OP = "import_private_key";
const TYPE = "ACTIVITY_TYPE_IMPORT_PRIVATE_KEY";
/** Private key 1: its Ethereum address is the well-known 0x7E5F…. */
const KEY_ONE = "0000000000000000000000000000000000000000000000000000000000000001";
const KEY_ONE_ADDRESS = "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf";

let n = 0;
async function encrypted(
  h: Harness,
  privateKey: string,
  importBundle: string,
  keyFormat: "HEXADECIMAL" | "SOLANA" = "HEXADECIMAL",
): Promise<string> {
  const { organizationId, userId } = h.root;
  return encryptPrivateKeyToBundle({
    privateKey,
    keyFormat,
    importBundle,
    userId,
    organizationId,
    dangerouslyOverrideSignerPublicKey: await bundleSigner(h),
  });
}

perEngine("import_private_key", (h) => {
  it("imports private key 1: its known address, imported: true; the same bundle twice is refused", async () => {
    const { userId } = h().root;
    const encryptedBundle = await encrypted(h(), `0x${KEY_ONE}`, await initKeyImport(h()));
    const res = await h().submit(OP, TYPE, {
      userId,
      privateKeyName: `imported-${n++}`,
      encryptedBundle,
      curve: "CURVE_SECP256K1",
      addressFormats: ["ADDRESS_FORMAT_ETHEREUM"],
    });
    const result = completed(res, "importPrivateKeyResult");
    assert.deepEqual(result.addresses, [{ format: "ADDRESS_FORMAT_ETHEREUM", address: KEY_ONE_ADDRESS }]);
    assert.equal(Buffer.from(await openedPrivateKey(h(), result.privateKeyId)).toString("hex"), KEY_ONE);
    const got = (await h().query("get_private_key", { privateKeyId: result.privateKeyId })).json.privateKey;
    assert.deepEqual([got.imported, got.exported], [true, false]);
    notFound(
      await h().submit(OP, TYPE, { userId, privateKeyName: `again-${n++}`, encryptedBundle, curve: "CURVE_SECP256K1", addressFormats: [] }),
      /no pending import.*init_import_private_key/,
    );
  });

  it("an ed25519 key from a Solana key pair; a wallet target does not open a key bundle; a zero key is 400", async () => {
    const { userId } = h().root;
    const { ed25519 } = await import("@noble/curves/ed25519.js");
    const { base58 } = await import("@scure/base");
    const seed = new Uint8Array(32).fill(7);
    const pub = ed25519.getPublicKey(seed);
    const pair = base58.encode(new Uint8Array([...seed, ...pub]));
    const solBundle = await encrypted(h(), pair, await initKeyImport(h()), "SOLANA");
    const sol = completed(
      await h().submit(OP, TYPE, {
        userId,
        privateKeyName: `sol-${n++}`,
        encryptedBundle: solBundle,
        curve: "CURVE_ED25519",
        addressFormats: ["ADDRESS_FORMAT_SOLANA"],
      }),
      "importPrivateKeyResult",
    );
    assert.equal(sol.addresses[0].address, base58.encode(pub));

    // Encrypted to the wallet target: the key target does not open it.
    await initKeyImport(h());
    const toWallet = await encrypted(h(), KEY_ONE, await initImport(h()));
    invalidRequest(
      await h().submit(OP, TYPE, {
        userId,
        privateKeyName: `x-${n++}`,
        encryptedBundle: toWallet,
        curve: "CURVE_SECP256K1",
        addressFormats: [],
      }),
      /could not be decrypted/,
      ["parameters.encryptedBundle"],
    );
    const zero = await encrypted(h(), "00".repeat(32), await initKeyImport(h()));
    invalidRequest(
      await h().submit(OP, TYPE, {
        userId,
        privateKeyName: `x-${n++}`,
        encryptedBundle: zero,
        curve: "CURVE_SECP256K1",
        addressFormats: [],
      }),
      /not a CURVE_SECP256K1 private key/,
      ["parameters.encryptedBundle"],
    );
    invalidRequest(
      await h().submit(OP, TYPE, {
        userId,
        privateKeyName: `x-${n++}`,
        encryptedBundle: zero,
        curve: "CURVE_ED25519",
        addressFormats: ["ADDRESS_FORMAT_ETHEREUM"],
      }),
      /addressFormats/,
    );
  });
});
