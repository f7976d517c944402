// Signing end to end (docs/signing.md): the real server (child process) and the official
// clients only, on both engines. @turnkey/viem's createAccount over an @turnkey/sdk-server
// client signs messages, typed data and EIP-7702 authorizations, verified with viem; a Solana
// account signs through sdk-server's signRawPayload and @turnkey/solana's TurnkeySigner,
// verified with @noble/curves and @solana/web3.js; private keys are created and sign by id; a
// sub-organization cannot sign with its parent's keys; a 2-of-2 quorum makes signing wait and
// the approval signs. Last, the grep: neither database nor the log holds a private key,
// a derived account key, a mnemonic or a seed.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Turnkey, DEFAULT_ETHEREUM_ACCOUNTS, DEFAULT_SOLANA_ACCOUNTS } from "@turnkey/sdk-server";
import { createAccount, isTurnkeyActivityConsensusNeededError, TurnkeyConsensusNeededError } from "@turnkey/viem";
import { TurnkeySigner } from "@turnkey/solana";
import { Keypair, PublicKey, SystemProgram, Transaction } from "@solana/web3.js";
import { hashMessage, keccak256, recoverAddress, toHex, verifyMessage, verifyTypedData, type TypedDataDefinition } from "viem";
import { recoverAuthorizationAddress } from "viem/utils";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { assertSecretsNowhere, type Secret } from "../helpers/secrets-grep.ts";
import {
  engines,
  newInstance,
  rejection,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { MasterKey } from "../../src/crypto/envelope.ts";
import { openStore } from "../../src/store/db.ts";
import { deriveKey, seedOf } from "../../src/wallets/derivation.ts";

type Key = { publicKey: string; privateKey: string };

const typedData = {
  domain: { name: "Sigil Mail", version: "1", chainId: 1n, verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC" },
  types: {
    EIP712Domain: [
      { name: "name", type: "string" },
      { name: "version", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
    ],
    Person: [
      { name: "name", type: "string" },
      { name: "wallet", type: "address" },
    ],
    Mail: [
      { name: "from", type: "Person" },
      { name: "to", type: "Person[]" },
      { name: "contents", type: "string" },
      { name: "amount", type: "uint256" },
    ],
  },
  primaryType: "Mail",
  message: {
    from: { name: "Alice", wallet: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" },
    to: [{ name: "Bob", wallet: "0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB" }],
    contents: "Hello from Sigil",
    amount: 10n ** 21n,
  },
} as const satisfies TypedDataDefinition;

for (const engine of engines()) {
  describe(`signing through the official clients (${engine.name})`, { skip: engine.skip, timeout: 240_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    /** Every wallet and private key this suite created, whose secrets must appear nowhere. */
    const wallets: string[] = [];
    const privateKeys: string[] = [];

    const apiClient = (key: Key, organizationId: string) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: organizationId,
        // An activity awaiting consensus is polled once, then handed back as it stands.
        activityPoller: { intervalMs: 20, numRetries: 0 },
      }).apiClient();
    const root = () => apiClient({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey }, init.organizationId);

    async function withStore<T>(fn: (store: ReturnType<typeof openStore>, master: MasterKey) => Promise<T>): Promise<T> {
      const store = openStore({ dataDir: inst.dataDir, databaseUrl: inst.env.DATABASE_URL || undefined });
      try {
        return await fn(store, MasterKey.parse(inst.env.SIGIL_MASTER_KEY!));
      } finally {
        await store.close();
      }
    }

    before(async () => {
      inst = await newInstance(engine.name, { LOG_LEVEL: "debug" });
      init = await sigilInit(inst, ["--name", "Signing Org"]);
      server = await startServer(inst);
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("@turnkey/viem createAccount: signMessage, signTypedData and signAuthorization verify to the account address", async () => {
      const c = root();
      const w = await c.createWallet({ walletName: "viem", accounts: DEFAULT_ETHEREUM_ACCOUNTS });
      wallets.push(w.walletId);
      const address = w.addresses[0] as `0x${string}`;
      const account = await createAccount({ client: c, organizationId: init.organizationId, signWith: address });
      assert.equal(account.address, address);

      const message = "Sign in to Sigil";
      const signature = await account.signMessage({ message });
      assert.ok(await verifyMessage({ address, message, signature }));
      assert.equal(await recoverAddress({ hash: hashMessage(message), signature }), address);
      const raw = await account.signMessage({ message: { raw: "0xdeadbeef" } });
      assert.ok(await verifyMessage({ address, message: { raw: "0xdeadbeef" }, signature: raw }));

      const typed = await account.signTypedData(typedData);
      assert.ok(await verifyTypedData({ address, ...typedData, signature: typed }));

      const auth = await account.signAuthorization!({
        contractAddress: "0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B",
        chainId: 8453,
        nonce: 7,
      });
      assert.equal(await recoverAuthorizationAddress({ authorization: auth }), address);

      // Signing with a lower-case address names the same account.
      const lower = await createAccount({ client: c, organizationId: init.organizationId, signWith: address.toLowerCase() });
      assert.ok(await verifyMessage({ address, message, signature: await lower.signMessage({ message }) }));
    });

    it("an ed25519 (Solana) account: sdk-server signRawPayload and @turnkey/solana's TurnkeySigner verify", async () => {
      const c = root();
      const w = await c.createWallet({ walletName: "solana", accounts: DEFAULT_SOLANA_ACCOUNTS });
      wallets.push(w.walletId);
      const address = w.addresses[0]!;
      const message = Buffer.from("solana raw payload");
      const res = await c.signRawPayload({
        signWith: address,
        payload: message.toString("hex"),
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NOT_APPLICABLE",
      });
      assert.equal(res.v, "");
      assert.ok(ed25519.verify(Buffer.from(res.r + res.s, "hex"), message, base58.decode(address)));

      const signer = new TurnkeySigner({ organizationId: init.organizationId, client: c });
      const signed = await signer.signMessage(new TextEncoder().encode("hello solana"), address);
      assert.ok(ed25519.verify(signed, new TextEncoder().encode("hello solana"), base58.decode(address)));
      const from = new PublicKey(address);
      const txs = [1, 2].map((lamports) => {
        const tx = new Transaction({ feePayer: from, recentBlockhash: Keypair.generate().publicKey.toBase58() });
        tx.add(SystemProgram.transfer({ fromPubkey: from, toPubkey: Keypair.generate().publicKey, lamports }));
        return tx;
      });
      await signer.addSignature(txs[0]!, address);
      assert.ok(txs[0]!.verifySignatures());
      const all = (await signer.signAllTransactions([txs[1]!], address)) as Transaction[];
      assert.ok(all[0]!.verifySignatures());
      // An Ethereum encoding with an ed25519 key is refused, naming the field.
      const bad = await rejection(
        c.signRawPayload({
          signWith: address,
          payload: "ab",
          encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
          hashFunction: "HASH_FUNCTION_KECCAK256",
        }),
      );
      assert.equal(bad.code, 3);
      assert.match(bad.message, /parameters\.hashFunction/);
    });

    it("createPrivateKeys, then viem (by private key id) and signRawPayload sign with it", async () => {
      const c = root();
      const created = await c.createPrivateKeys({
        privateKeys: [
          { privateKeyName: "eth key", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: ["ADDRESS_FORMAT_ETHEREUM"] },
          { privateKeyName: "sol key", curve: "CURVE_ED25519", privateKeyTags: [], addressFormats: ["ADDRESS_FORMAT_SOLANA"] },
        ],
      });
      const [eth, sol] = created.privateKeys;
      privateKeys.push(eth!.privateKeyId!, sol!.privateKeyId!);
      const address = eth!.addresses![0]!.address as `0x${string}`;
      // viem looks the Ethereum address up with getPrivateKey.
      const account = await createAccount({ client: c, organizationId: init.organizationId, signWith: eth!.privateKeyId! });
      assert.equal(account.address, address);
      const signature = await account.signMessage({ message: "from a private key" });
      assert.ok(await verifyMessage({ address, message: "from a private key", signature }));
      const digest = keccak256(toHex("digest"));
      const res = await c.signRawPayload({
        signWith: eth!.privateKeyId!,
        payload: digest,
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NO_OP",
      });
      assert.equal(
        await recoverAddress({ hash: digest, signature: { r: `0x${res.r}`, s: `0x${res.s}`, yParity: Number(res.v) } }),
        address,
      );
      const ed = await c.signRawPayloads({
        signWith: sol!.privateKeyId!,
        payloads: ["0a0b", "0c0d"],
        encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
        hashFunction: "HASH_FUNCTION_NOT_APPLICABLE",
      });
      ed.signatures!.forEach((sig, i) =>
        assert.ok(
          ed25519.verify(
            Buffer.from(sig.r + sig.s, "hex"),
            Buffer.from(["0a0b", "0c0d"][i]!, "hex"),
            base58.decode(sol!.addresses![0]!.address!),
          ),
        ),
      );
      const listed = (await c.getPrivateKeys({})).privateKeys.map((k) => k.privateKeyId);
      assert.ok(listed.includes(eth!.privateKeyId!) && listed.includes(sol!.privateKeyId!));
    });

    it("a sub-organization signs with its own keys only; a 2-of-2 quorum makes signing wait and the approval signs", async () => {
      const c = root();
      const parentWallet = await c.createWallet({ walletName: "parent", accounts: DEFAULT_ETHEREUM_ACCOUNTS });
      wallets.push(parentWallet.walletId);
      const parentKey = (
        await c.createPrivateKeys({
          privateKeys: [{ privateKeyName: "parent key", curve: "CURVE_SECP256K1", privateKeyTags: [], addressFormats: [] }],
        })
      ).privateKeys[0]!;
      privateKeys.push(parentKey.privateKeyId!);
      const a = generateP256KeyPair();
      const b = generateP256KeyPair();
      const apiKey = (k: Key) => ({ apiKeyName: "k", publicKey: k.publicKey, curveType: "API_KEY_CURVE_P256" as const });
      const sub = await c.createSubOrganization({
        subOrganizationName: "two signers",
        rootQuorumThreshold: 2,
        rootUsers: [
          { userName: "a", apiKeys: [apiKey(a)], authenticators: [], oauthProviders: [] },
          { userName: "b", apiKeys: [apiKey(b)], authenticators: [], oauthProviders: [] },
        ],
        wallet: { walletName: "shared", accounts: DEFAULT_ETHEREUM_ACCOUNTS },
      });
      wallets.push(sub.wallet!.walletId);
      const subAddress = sub.wallet!.addresses[0] as `0x${string}`;
      const ca = apiClient(a, sub.subOrganizationId);
      const cb = apiClient(b, sub.subOrganizationId);

      // The parent's account and key do not exist for the sub-organization: 404, no signature.
      for (const signWith of [parentWallet.addresses[0]!, parentKey.privateKeyId!]) {
        const err = await rejection(
          ca.signRawPayload({ signWith, payload: "ab", encoding: "PAYLOAD_ENCODING_HEXADECIMAL", hashFunction: "HASH_FUNCTION_KECCAK256" }),
        );
        assert.equal(err.code, 5, err.message);
        assert.match(err.message, /no wallet account, private key or public key/);
      }

      // Its own account: the 2-of-2 quorum makes viem's signMessage wait for consensus.
      const account = await createAccount({ client: ca, organizationId: sub.subOrganizationId, signWith: subAddress });
      const message = "needs both of us";
      const err = await account.signMessage({ message }).then(
        () => assert.fail("signed without consensus"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof TurnkeyConsensusNeededError || isTurnkeyActivityConsensusNeededError(err as never), String(err));
      const activityId = (err as TurnkeyConsensusNeededError).activityId!;
      const pending = (await ca.getActivity({ activityId })).activity;
      assert.equal(pending.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");
      assert.equal(pending.result?.signRawPayloadResult, undefined);
      const approved = await cb.approveActivity({ fingerprint: pending.fingerprint });
      assert.equal(approved.activity.status, "ACTIVITY_STATUS_COMPLETED");
      const sig = (await ca.getActivity({ activityId })).activity.result.signRawPayloadResult!;
      assert.equal(
        await recoverAddress({ hash: hashMessage(message), signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) } }),
        subAddress,
      );
    });

    it("neither database nor the log holds a private key, an account key, a mnemonic or a seed", async () => {
      assert.ok(privateKeys.length >= 3 && wallets.length >= 4);
      const secrets: Secret[] = [];
      await withStore(async (store, master) => {
        for (const id of privateKeys) {
          const row = await store.db.selectFrom("private_keys").select("key_sealed").where("id", "=", id).executeTakeFirstOrThrow();
          assert.match(row.key_sealed, /^sgl1\./);
          const key = await master.open(row.key_sealed, `private-key:${id}`);
          assert.equal(key.length, 32);
          secrets.push(
            { what: `${id} key hex`, needle: key.toString("hex") },
            { what: `${id} key base64`, needle: key.toString("base64") },
          );
        }
        for (const id of wallets) {
          const row = await store.db.selectFrom("wallets").select("seed_sealed").where("id", "=", id).executeTakeFirstOrThrow();
          const mnemonic = (await master.open(row.seed_sealed, `wallet-seed:${id}`)).toString("utf8");
          const seed = seedOf(mnemonic);
          secrets.push({ what: `${id} mnemonic`, needle: mnemonic }, { what: `${id} seed`, needle: Buffer.from(seed).toString("hex") });
          const accounts = await store.db.selectFrom("wallet_accounts").select(["curve", "path"]).where("wallet_id", "=", id).execute();
          for (const a of accounts) {
            const k = Buffer.from(deriveKey(seed, a.curve as "CURVE_SECP256K1", a.path).privateKey);
            secrets.push(
              { what: `${id} ${a.path} key hex`, needle: k.toString("hex") },
              { what: `${id} ${a.path} key base64`, needle: k.toString("base64") },
            );
          }
        }
      });
      assert.match(server.output(), /sign_raw_payload/, "the debug log saw the signing requests");
      await assertSecretsNowhere(engine.name, inst, server.output(), secrets, "private_keys");
    });
  });
}
