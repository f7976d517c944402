import { it } from "node:test";
import assert from "node:assert/strict";
import { keccak256, recoverAddress, toHex, hashMessage, hashTypedData, type TypedDataDefinition } from "viem";
import { ed25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { base58 } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import {
  addUsersWithKeys,
  completed,
  forbidden,
  invalidRequest,
  notFound,
  perEngine,
  twoOfTwo,
  type Creds,
  type Harness,
  type Json,
} from "../helpers/inproc.ts";
import { ETH, SOL, newPrivateKey, newWallet } from "../helpers/keys-and-wallets.ts";
import { MAX_EIP712_ELEMENTS } from "../../src/signing/eip712.ts";

const OP = "sign_raw_payload";
const TYPE = "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2";
const CONSENSUS = "ACTIVITY_STATUS_CONSENSUS_NEEDED";

const sign = (h: Harness, parameters: Json, as?: Creds) => h.submit(OP, TYPE, parameters, as ? { as } : {});
const signed = async (h: Harness, parameters: Json, as?: Creds) =>
  completed(await sign(h, parameters, as), "signRawPayloadResult") as { r: string; s: string; v: string };
/** Typed data of n uint256 zeros: n + 3 elements (the domain's name and its piece, the array). */
const zerosDoc = (n: number): TypedDataDefinition => ({
  types: { EIP712Domain: [{ name: "name", type: "string" }], M: [{ name: "v", type: "uint256[]" }] },
  primaryType: "M",
  domain: { name: "zeros" },
  message: { v: Array(n).fill("0") },
});
const recovered = (digest: `0x${string}`, sig: { r: string; s: string; v: string }) =>
  recoverAddress({ hash: digest, signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) } });

perEngine("sign_raw_payload", (h) => {
  it("a wallet account signs, named by its address in any casing or by its public key; the signature recovers to it", async () => {
    const { addresses } = await newWallet(h(), [
      ETH(),
      ETH("m/44'/60'/0'/0/0", { addressFormat: "ADDRESS_FORMAT_COMPRESSED" }),
      ETH("m/44'/60'/0'/0/0", { addressFormat: "ADDRESS_FORMAT_UNCOMPRESSED" }),
    ]);
    const [address, compressed, uncompressed] = addresses as [`0x${string}`, string, string];
    const message = hashMessage("hello sigil");
    for (const signWith of [
      address,
      address.toLowerCase(),
      `0x${address.slice(2).toUpperCase()}`,
      compressed,
      uncompressed,
      `0x${compressed}`,
    ]) {
      const sig = await signed(h(), {
        signWith,
        payload: message,
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NO_OP",
      });
      assert.match(sig.r, /^[0-9a-f]{64}$/);
      assert.match(sig.s, /^[0-9a-f]{64}$/);
      assert.match(sig.v, /^0[01]$/);
      assert.equal(await recovered(message, sig), address, `signWith ${signWith}`);
    }
    // KECCAK256 / SHA256 hash the bytes first.
    const text = "text to hash";
    const k = await signed(h(), {
      signWith: address,
      payload: text,
      encoding: "PAYLOAD_ENCODING_TEXT_UTF8",
      hashFunction: "HASH_FUNCTION_KECCAK256",
    });
    assert.equal(await recovered(keccak256(toHex(text)), k), address);
    const s = await signed(h(), {
      signWith: address,
      payload: toHex(text),
      encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
      hashFunction: "HASH_FUNCTION_SHA256",
    });
    assert.equal(await recovered(toHex(sha256(new TextEncoder().encode(text))), s), address);
    // Deterministic (RFC 6979): the same request signs the same.
    const again = await signed(h(), {
      signWith: address,
      payload: text,
      encoding: "PAYLOAD_ENCODING_TEXT_UTF8",
      hashFunction: "HASH_FUNCTION_KECCAK256",
    });
    assert.deepEqual(again, k);
  });

  it("an ed25519 (Solana) account signs the message itself: r ‖ s verifies, v is empty", async () => {
    const { addresses } = await newWallet(h(), [SOL()]);
    const message = Buffer.from("solana transaction bytes");
    const sig = await signed(h(), {
      signWith: addresses[0],
      payload: message.toString("hex"),
      encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
      hashFunction: "HASH_FUNCTION_NOT_APPLICABLE",
    });
    assert.equal(sig.v, "");
    assert.ok(ed25519.verify(Buffer.from(sig.r + sig.s, "hex"), message, base58.decode(addresses[0]!)));
    // Its public key in hex names it too.
    const byKey = await signed(h(), {
      signWith: Buffer.from(base58.decode(addresses[0]!)).toString("hex"),
      payload: "hi",
      encoding: "PAYLOAD_ENCODING_TEXT_UTF8",
      hashFunction: "HASH_FUNCTION_NOT_APPLICABLE",
    });
    assert.ok(ed25519.verify(Buffer.from(byKey.r + byKey.s, "hex"), Buffer.from("hi"), base58.decode(addresses[0]!)));
  });

  it("a private key signs by id, by one of its addresses and by its public key", async () => {
    const key = await newPrivateKey(h(), "CURVE_SECP256K1", ["ADDRESS_FORMAT_ETHEREUM"]);
    const address = key.addresses[0]!.address as `0x${string}`;
    const { privateKey } = (await h().query("get_private_key", { privateKeyId: key.privateKeyId })).json;
    const digest = keccak256(toHex("with a private key"));
    for (const signWith of [
      key.privateKeyId,
      address,
      privateKey.publicKey,
      Buffer.from(secp256k1.Point.fromHex(privateKey.publicKey).toBytes(false)).toString("hex"),
    ]) {
      const sig = await signed(h(), {
        signWith,
        payload: digest,
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NO_OP",
      });
      assert.equal(await recovered(digest, sig), address, `signWith ${signWith}`);
    }
    const ed = await newPrivateKey(h(), "CURVE_ED25519", ["ADDRESS_FORMAT_SOLANA"]);
    const sig = await signed(h(), {
      signWith: ed.privateKeyId,
      payload: "ed",
      encoding: "PAYLOAD_ENCODING_TEXT_UTF8",
      hashFunction: "HASH_FUNCTION_NOT_APPLICABLE",
    });
    assert.ok(ed25519.verify(Buffer.from(sig.r + sig.s, "hex"), Buffer.from("ed"), base58.decode(ed.addresses[0]!.address)));
  });

  it("every write to the organization's keys moves its keys version, and no other organization's", async () => {
    const org = await h().newOrg("Versions");
    const version = async (id: string) =>
      Number(
        (await h().service.store.db.selectFrom("organizations").select("keys_version").where("id", "=", id).executeTakeFirstOrThrow())
          .keys_version,
      );
    const theirs = await version(h().root.organizationId);
    let last = await version(org.organizationId);
    const moved = async (what: string, work: () => Promise<unknown>) => {
      await work();
      const now = await version(org.organizationId);
      assert.ok(now > last, `${what}: keys_version stayed ${now}`);
      last = now;
    };
    const as = { as: org };
    let walletId = "";
    await moved(
      "create_wallet",
      async () =>
        (walletId = completed(
          await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "v", accounts: [ETH()] }, as),
          "createWalletResult",
        ).walletId),
    );
    await moved("create_wallet_accounts", async () =>
      completed(
        await h().submit(
          "create_wallet_accounts",
          "ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS",
          { walletId, accounts: [ETH("m/44'/60'/0'/0/1")] },
          as,
        ),
        "createWalletAccountsResult",
      ),
    );
    await moved("update_wallet", async () =>
      completed(await h().submit("update_wallet", "ACTIVITY_TYPE_UPDATE_WALLET", { walletId, walletName: "v2" }, as), "updateWalletResult"),
    );
    let privateKeyId = "";
    await moved(
      "create_private_keys",
      async () => (privateKeyId = (await newPrivateKey(h(), "CURVE_SECP256K1", ["ADDRESS_FORMAT_ETHEREUM"], org)).privateKeyId),
    );
    await moved("delete_private_keys", async () =>
      completed(
        await h().submit(
          "delete_private_keys",
          "ACTIVITY_TYPE_DELETE_PRIVATE_KEYS",
          { privateKeyIds: [privateKeyId], deleteWithoutExport: true },
          as,
        ),
        "deletePrivateKeysResult",
      ),
    );
    await moved("delete_wallets", async () =>
      completed(
        await h().submit("delete_wallets", "ACTIVITY_TYPE_DELETE_WALLETS", { walletIds: [walletId], deleteWithoutExport: true }, as),
        "deleteWalletsResult",
      ),
    );
    assert.equal(await version(h().root.organizationId), theirs, "another organization's keys version moved");
  });

  it("a key deleted after the submission found it, before the signing transaction, does not sign (404, nothing recorded)", async () => {
    const { addresses } = await newWallet(h(), [ETH(), ETH("m/44'/60'/0'/0/1")]);
    const [, doomed] = addresses as [string, string];
    const req = { signWith: doomed, payload: "ab", encoding: "PAYLOAD_ENCODING_HEXADECIMAL", hashFunction: "HASH_FUNCTION_KECCAK256" };
    completed(await sign(h(), req), "signRawPayloadResult"); // remembered now
    // Another node deletes the account between this node's look-up and its transaction.
    const signers = h().service.state.signers;
    const resolve = signers.resolve.bind(signers);
    signers.resolve = async (...args) => {
      const found = await resolve(...args);
      await h().service.store.db.deleteFrom("wallet_accounts").where("address", "=", doomed).execute();
      return found;
    };
    try {
      const before = await h()
        .service.store.db.selectFrom("activities")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow();
      notFound(await sign(h(), { ...req, payload: "abcd" }), /no wallet account, private key or public key/);
      const after = await h()
        .service.store.db.selectFrom("activities")
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow();
      assert.equal(Number(after.n), Number(before.n));
    } finally {
      signers.resolve = resolve;
    }
  });

  it("invalid combinations are 400 naming the field; an unknown or another organization's key is 404 with no signature", async () => {
    const { addresses } = await newWallet(h(), [ETH(), SOL()]);
    const [eth, sol] = addresses as [string, string];
    invalidRequest(
      await sign(h(), {
        signWith: sol,
        payload: "abcd",
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_KECCAK256",
      }),
      /ed25519 signs the message itself/,
      ["parameters.hashFunction"],
    );
    invalidRequest(
      await sign(h(), { signWith: eth, payload: "abcd", encoding: "PAYLOAD_ENCODING_HEXADECIMAL", hashFunction: "HASH_FUNCTION_NO_OP" }),
      /32-byte digest/,
      ["parameters.payload"],
    );
    invalidRequest(
      await sign(h(), {
        signWith: eth,
        payload: "hello",
        encoding: "PAYLOAD_ENCODING_TEXT_UTF8",
        hashFunction: "HASH_FUNCTION_NOT_APPLICABLE",
      }),
      /secp256k1 signs a digest/,
      ["parameters.hashFunction"],
    );
    invalidRequest(
      await sign(h(), { signWith: eth, payload: "xyz", encoding: "PAYLOAD_ENCODING_HEXADECIMAL", hashFunction: "HASH_FUNCTION_KECCAK256" }),
      /hex of whole bytes/,
      ["parameters.payload"],
    );
    invalidRequest(
      await sign(h(), { signWith: eth, payload: "{}", encoding: "PAYLOAD_ENCODING_EIP712", hashFunction: "HASH_FUNCTION_KECCAK256" }),
      /HASH_FUNCTION_NO_OP/,
      ["parameters.hashFunction"],
    );
    invalidRequest(
      await sign(h(), { signWith: eth, payload: "ab", encoding: "PAYLOAD_ENCODING_BASE64", hashFunction: "HASH_FUNCTION_KECCAK256" }),
      /encoding/,
    );
    const unknown = await sign(h(), {
      signWith: "0x1111111111111111111111111111111111111111",
      payload: "ab",
      encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
      hashFunction: "HASH_FUNCTION_KECCAK256",
    });
    notFound(unknown, /no wallet account, private key or public key/);
    // Another organization names this one's account and key: 404, never a signature.
    const other = await h().newOrg("Other");
    const key = await newPrivateKey(h(), "CURVE_SECP256K1", ["ADDRESS_FORMAT_ETHEREUM"]);
    for (const signWith of [eth, key.privateKeyId, key.addresses[0]!.address]) {
      const res = await sign(
        h(),
        { signWith, payload: "ab", encoding: "PAYLOAD_ENCODING_HEXADECIMAL", hashFunction: "HASH_FUNCTION_KECCAK256" },
        other,
      );
      notFound(res, /no wallet account, private key or public key/);
      assert.ok(!JSON.stringify(res.json).includes('"r"'));
    }
  });

  it("policies read wallet_account.address (lower-case), wallet and private_key; an unbound keyword never allows", async () => {
    const org = await h().newOrg("Signing policies");
    const [member] = await addUsersWithKeys(h(), 1, org);
    const policy = async (policyName: string, effect: string, condition: string) =>
      completed(
        await h().submit(
          "create_policy",
          "ACTIVITY_TYPE_CREATE_POLICY_V3",
          { policyName, effect, condition, consensus: "", notes: "" },
          { as: org },
        ),
        "createPolicyResult",
      );
    const wallet = completed(
      await h().submit(
        "create_wallet",
        "ACTIVITY_TYPE_CREATE_WALLET",
        { walletName: "hot", accounts: [ETH(), ETH("m/44'/60'/0'/0/1")] },
        { as: org },
      ),
      "createWalletResult",
    );
    const [allowed, other] = wallet.addresses as [string, string];
    const key = await newPrivateKey(h(), "CURVE_SECP256K1", [], org);
    const tagged = await newPrivateKey(h(), "CURVE_SECP256K1", [], org);
    const req = (signWith: string) => ({
      signWith,
      payload: "ab",
      encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
      hashFunction: "HASH_FUNCTION_KECCAK256",
    });

    // Nothing allowed yet; an allow on `private_key` does not cover a wallet account (the keyword is absent).
    await policy("by key", "EFFECT_ALLOW", `activity.action == 'SIGN' && private_key.id == '${key.privateKeyId}'`);
    forbidden(await sign(h(), req(allowed), member));
    completed(await sign(h(), req(key.privateKeyId), member), "signRawPayloadResult");
    forbidden(await sign(h(), req(tagged.privateKeyId), member));

    await policy(
      "by address",
      "EFFECT_ALLOW",
      `activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN' && wallet_account.address == '${allowed.toLowerCase()}' && wallet.label == 'hot'`,
    );
    completed(await sign(h(), req(allowed), member), "signRawPayloadResult");
    completed(await sign(h(), req(allowed.toLowerCase()), member), "signRawPayloadResult");
    forbidden(await sign(h(), req(other), member));

    // Tags: a private key tag id in private_key.tags.
    const tag = completed(
      await h().submit(
        "create_private_key_tag",
        "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG",
        { privateKeyTagName: "hot", privateKeyIds: [tagged.privateKeyId] },
        { as: org },
      ),
      "createPrivateKeyTagResult",
    );
    await policy("by tag", "EFFECT_ALLOW", `private_key.tags.contains('${tag.privateKeyTagId}')`);
    completed(await sign(h(), req(tagged.privateKeyId), member), "signRawPayloadResult");
    await policy("deny wallet", "EFFECT_DENY", `wallet.id == '${wallet.walletId}' && wallet_account.address == '${allowed.toLowerCase()}'`);
    forbidden(await sign(h(), req(allowed), member), /denied|deny|polic/i);
  });

  it("policies read eth.eip_712 of typed data; typed data the parser cannot read binds nothing and never allows", async () => {
    const org = await h().newOrg("Typed-data policies");
    const [member] = await addUsersWithKeys(h(), 1, org);
    const wallet = completed(
      await h().submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", { walletName: "typed", accounts: [ETH()] }, { as: org }),
      "createWalletResult",
    );
    const [account] = wallet.addresses as [string];
    const good = "0x" + "ab".repeat(20);
    const other = "0x" + "cd".repeat(20);
    const typed = (verifyingContract: string, withDomainType = true) =>
      JSON.stringify({
        types: {
          ...(withDomainType
            ? {
                EIP712Domain: [
                  { name: "name", type: "string" },
                  { name: "chainId", type: "uint256" },
                  { name: "verifyingContract", type: "address" },
                ],
              }
            : {}),
          Permit: [
            { name: "owner", type: "address" },
            { name: "value", type: "uint256" },
          ],
        },
        primaryType: "Permit",
        domain: { name: "Token", chainId: 1, verifyingContract },
        message: { owner: account, value: "5" },
      });
    const req = (payload: string) => ({
      signWith: account,
      payload,
      encoding: "PAYLOAD_ENCODING_EIP712",
      hashFunction: "HASH_FUNCTION_NO_OP",
    });
    completed(
      await h().submit(
        "create_policy",
        "ACTIVITY_TYPE_CREATE_POLICY_V3",
        {
          policyName: "permit on one contract",
          effect: "EFFECT_ALLOW",
          condition: `eth.eip_712.domain.verifying_contract == '${good}' && eth.eip_712.primary_type == 'Permit' && eth.eip_712.message['value'] < 10`,
          consensus: "",
          notes: "",
        },
        { as: org },
      ),
      "createPolicyResult",
    );
    completed(await sign(h(), req(typed(good.toUpperCase().replace("0X", "0x"))), member), "signRawPayloadResult");
    forbidden(await sign(h(), req(typed(other)), member));
    // Without an EIP712Domain type the hash still works (an empty domain) but nothing is bound: no allow.
    forbidden(await sign(h(), req(typed(good, false)), member));
    // The root user signs it all the same (no policy needed): the payload itself is valid.
    completed(await sign(h(), req(typed(good, false)), org), "signRawPayloadResult");
  });

  it("consensus: with a 2-of-2 root quorum signing waits (CONSENSUS_NEEDED) and the approval signs", async () => {
    const { a, b } = await twoOfTwo(h());
    const pending = await h().submit(
      "create_wallet",
      "ACTIVITY_TYPE_CREATE_WALLET",
      { walletName: "shared", accounts: [ETH()] },
      { as: a },
    );
    assert.equal(pending.json.activity.status, CONSENSUS);
    const created = completed(
      await h().submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint: pending.json.activity.fingerprint }, { as: b }),
      "createWalletResult",
    );
    const address = created.addresses[0] as `0x${string}`;
    // A key the organization does not hold, or a payload the key's curve cannot sign, is refused
    // at once: it never waits for approvals.
    notFound(
      await sign(
        h(),
        {
          signWith: "0x1111111111111111111111111111111111111111",
          payload: "ab",
          encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
          hashFunction: "HASH_FUNCTION_KECCAK256",
        },
        a,
      ),
      /no wallet account/,
    );
    invalidRequest(
      await sign(
        h(),
        { signWith: address, payload: "ab", encoding: "PAYLOAD_ENCODING_HEXADECIMAL", hashFunction: "HASH_FUNCTION_NO_OP" },
        a,
      ),
      /32-byte digest/,
      ["parameters.payload"],
    );
    const digest = keccak256(toHex("needs two"));
    const res = await sign(
      h(),
      { signWith: address, payload: digest, encoding: "PAYLOAD_ENCODING_HEXADECIMAL", hashFunction: "HASH_FUNCTION_NO_OP" },
      a,
    );
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.equal(res.json.activity.status, CONSENSUS);
    assert.equal(res.json.activity.result?.signRawPayloadResult, undefined);
    const approved = await h().submit(
      "approve_activity",
      "ACTIVITY_TYPE_APPROVE_ACTIVITY",
      { fingerprint: res.json.activity.fingerprint },
      { as: b },
    );
    const sig = completed(approved, "signRawPayloadResult") as { r: string; s: string; v: string };
    assert.equal(await recovered(digest, sig), address);
    const stored = (await h().query("get_activity", { activityId: res.json.activity.id }, { as: a })).json.activity;
    assert.deepEqual(stored.result.signRawPayloadResult, sig);

    // Typed data awaiting approval: the approval hashes the recorded payload again (docs/signing.md §2.4).
    const typed = zerosDoc(1_000);
    const waiting = await sign(
      h(),
      { signWith: address, payload: JSON.stringify(typed), encoding: "PAYLOAD_ENCODING_EIP712", hashFunction: "HASH_FUNCTION_NO_OP" },
      a,
    );
    assert.equal(waiting.json.activity.status, CONSENSUS);
    const typedSig = completed(
      await h().submit("approve_activity", "ACTIVITY_TYPE_APPROVE_ACTIVITY", { fingerprint: waiting.json.activity.fingerprint }, { as: b }),
      "signRawPayloadResult",
    ) as { r: string; s: string; v: string };
    assert.equal(await recovered(hashTypedData(typed), typedSig), address);
  });

  it("EIP-712: a document at the element bound signs, one element more is 400 naming parameters.payload and records nothing (docs/signing.md §2.4)", async () => {
    const { addresses } = await newWallet(h(), [ETH()]);
    const eth = addresses[0] as `0x${string}`;
    const req = (d: TypedDataDefinition) => ({
      signWith: eth,
      payload: JSON.stringify(d),
      encoding: "PAYLOAD_ENCODING_EIP712",
      hashFunction: "HASH_FUNCTION_NO_OP",
    });
    const atBound = zerosDoc(MAX_EIP712_ELEMENTS - 3);
    assert.equal(await recovered(hashTypedData(atBound), await signed(h(), req(atBound))), eth);
    const count = async () =>
      Number(
        (
          await h()
            .service.store.db.selectFrom("activities")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    invalidRequest(await sign(h(), req(zerosDoc(MAX_EIP712_ELEMENTS - 2))), new RegExp(`has more than ${MAX_EIP712_ELEMENTS} elements`), [
      "parameters.payload",
    ]);
    assert.equal(await count(), before);
  });

  it("through the official SDK (signRawPayload)", async () => {
    const { addresses } = await newWallet(h(), [ETH()]);
    const digest = keccak256(toHex("sdk"));
    const res = await (
      await h().sdk()
    ).signRawPayload({
      signWith: addresses[0]!,
      payload: digest,
      encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
      hashFunction: "HASH_FUNCTION_NO_OP",
    });
    assert.equal(await recovered(digest, res), addresses[0]);
  });
});
