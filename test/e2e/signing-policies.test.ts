// Policies over what is signed, end to end (docs/signing-policies.md): the real server (child
// process), the official SDK (@turnkey/sdk-server), @turnkey/viem's account and
// @turnkey/solana's signer, on both engines. A non-root user allowed to sign only for one
// recipient signs for it and is refused (403, the evaluation record naming the outcome) for
// another; a Solana v0 transfer comes back signed and verifies, one with a byte appended to its
// instruction is still a transfer; input that does not parse is a
// 400 and records nothing; `solana.tx.transfers.all(...)` over a transaction with no transfers
// holds.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { Turnkey } from "@turnkey/sdk-server";
import { createAccount } from "@turnkey/viem";
import { TurnkeySigner } from "@turnkey/solana";
import { parseTransaction, recoverTransactionAddress, type TransactionSerialized } from "viem";
import { ed25519 } from "@noble/curves/ed25519.js";
import {
  Keypair,
  LAMPORTS_PER_SOL,
  MessageV0,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  VersionedTransaction,
} from "@solana/web3.js";
import {
  engines,
  newInstance,
  sigilInit,
  startServer,
  type InitResult,
  type Instance,
  type RunningServer,
  rejection,
} from "../helpers/server.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";

type Key = { publicKey: string; privateKey: string };
const ETH0 = {
  curve: "CURVE_SECP256K1",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/60'/0'/0/0",
  addressFormat: "ADDRESS_FORMAT_ETHEREUM",
} as const;
const SOL0 = {
  curve: "CURVE_ED25519",
  pathFormat: "PATH_FORMAT_BIP32",
  path: "m/44'/501'/0'/0'",
  addressFormat: "ADDRESS_FORMAT_SOLANA",
} as const;
const ALLOWED = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const OTHER = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const BLOCKHASH = new PublicKey(Uint8Array.from({ length: 32 }, (_, i) => 200 - i)).toBase58();
const MEMO = new PublicKey("MemoSq4gqABAXKb7YSrLuRMH5W2cdzzxWwJgJ7kn5Hm");

for (const engine of engines()) {
  describe(`policies over signed transactions (${engine.name})`, { skip: engine.skip, timeout: 180_000 }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    let member: Key;
    let ethAddress: `0x${string}`;
    let solAddress: string;
    let policyIds: string[];

    const apiClient = (key: Key) =>
      new Turnkey({
        apiBaseUrl: server.url,
        apiPublicKey: key.publicKey,
        apiPrivateKey: key.privateKey,
        defaultOrganizationId: init.organizationId,
      }).apiClient();
    const root = () => apiClient({ publicKey: init.apiPublicKey, privateKey: init.apiPrivateKey });
    const activityCount = async () => (await root().getActivities({})).activities.length;

    before(async () => {
      inst = await newInstance(engine.name);
      init = await sigilInit(inst, ["--name", "Signing Policies Org"]);
      server = await startServer(inst);
      member = generateP256KeyPair();
      const users = await root().createUsers({
        users: [
          {
            userName: "signer",
            apiKeys: [{ apiKeyName: "k", publicKey: member.publicKey, curveType: "API_KEY_CURVE_P256" }],
            authenticators: [],
            oauthProviders: [],
            userTags: [],
          },
        ],
      });
      assert.equal(users.userIds.length, 1);
      const wallet = await root().createWallet({ walletName: "ops", accounts: [ETH0, SOL0] });
      [ethAddress, solAddress] = wallet.addresses as [`0x${string}`, string];
      ({ policyIds } = await root().createPolicies({
        policies: [
          {
            policyName: "pay the allowed address",
            effect: "EFFECT_ALLOW",
            consensus: "",
            notes: "",
            condition: `activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2' && eth.tx.to == '${ALLOWED}' && eth.tx.value <= 1000000000000000000`,
          },
          // For tooling that signs transactions without transfers (e.g. a memo): `all` over none holds.
          {
            policyName: "no stray lamports",
            effect: "EFFECT_ALLOW",
            consensus: "",
            notes: "",
            condition: "solana.tx.transfers.all(t, t.to == '11111111111111111111111111111111') && solana.tx.program_keys.count() == 1",
          },
        ],
      }));
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("EIP-1559 through @turnkey/viem: allowed for the named recipient, 403 for another with the evaluation on record", async () => {
      const account = await createAccount({ client: apiClient(member), organizationId: init.organizationId, signWith: ethAddress });
      const tx = {
        type: "eip1559",
        chainId: 8453,
        nonce: 0,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000n,
        gas: 21_000n,
        value: 10n ** 15n,
      } as const;
      const signed = (await account.signTransaction({ ...tx, to: ALLOWED })) as TransactionSerialized;
      assert.equal(await recoverTransactionAddress({ serializedTransaction: signed }), ethAddress);
      const back = parseTransaction(signed);
      assert.deepEqual([back.to, back.value, back.chainId, back.type], [ALLOWED, 10n ** 15n, 8453, "eip1559"]);

      const denied = await rejection(
        apiClient(member).signTransaction({
          signWith: ethAddress,
          type: "TRANSACTION_TYPE_ETHEREUM",
          unsignedTransaction: (await import("viem")).serializeTransaction({ ...tx, to: OTHER }).slice(2),
        }),
      );
      assert.equal(denied.code, 7, denied.message);
      const details = (denied as { details?: { "@type": string; activityId?: string }[] }).details ?? [];
      const permission = details.find((d) => d["@type"] === "type.googleapis.com/errors.v1.PolicyEnginePermissionError");
      assert.ok(permission?.activityId, JSON.stringify(details));
      const { policyEvaluations } = await root().getPolicyEvaluations({ activityId: permission.activityId! });
      assert.equal(policyEvaluations.length, 1);
      const outcomes = policyEvaluations[0]!.policyEvaluations;
      assert.equal(outcomes.at(-1)!.policyId, undefined);
      assert.equal(outcomes.at(-1)!.outcome, "OUTCOME_DENY_IMPLICIT");
      // Each policy is named with its outcome: the Ethereum one is false for this recipient,
      // the Solana one cannot be judged (no solana.tx on an Ethereum transaction).
      const byPolicy = new Map(outcomes.slice(0, -1).map((o) => [o.policyId, o.outcome]));
      assert.deepEqual([byPolicy.get(policyIds[0]!), byPolicy.get(policyIds[1]!)], ["OUTCOME_DENY_IMPLICIT", "OUTCOME_ERROR"]);
    });

    it("a Solana v0 transfer signed through @turnkey/solana verifies; a transaction with no transfers satisfies transfers.all", async () => {
      const from = new PublicKey(solAddress);
      // The transfer policy does not cover a real transfer to someone: denied.
      const transfer = new VersionedTransaction(
        MessageV0.compile({
          payerKey: from,
          recentBlockhash: BLOCKHASH,
          instructions: [SystemProgram.transfer({ fromPubkey: from, toPubkey: Keypair.generate().publicKey, lamports: 1000 })],
        }),
      );
      const signer = new TurnkeySigner({ organizationId: init.organizationId, client: apiClient(member) });
      assert.match((await rejection(signer.signTransaction(transfer, solAddress))).message, /denied|not authorized|polic/i);
      // 5 SOL with one 00 byte appended to the instruction: the System program ignores the byte and
      // moves the lamports, so it is a transfer to someone all the same (docs/signing-policies.md §1.3.1).
      const ix = SystemProgram.transfer({ fromPubkey: from, toPubkey: Keypair.generate().publicKey, lamports: 5 * LAMPORTS_PER_SOL });
      const padded = new VersionedTransaction(
        MessageV0.compile({
          payerKey: from,
          recentBlockhash: BLOCKHASH,
          instructions: [
            new TransactionInstruction({ programId: ix.programId, keys: ix.keys, data: Buffer.concat([ix.data, Buffer.of(0)]) }),
          ],
        }),
      );
      assert.match((await rejection(signer.signTransaction(padded, solAddress))).message, /denied|not authorized|polic/i);
      // The root user signs it (root may do anything); the signature verifies.
      const signed = (await new TurnkeySigner({ organizationId: init.organizationId, client: root() }).signTransaction(
        transfer,
        solAddress,
      )) as VersionedTransaction;
      assert.ok(ed25519.verify(signed.signatures[0]!, signed.message.serialize(), from.toBytes()));
      assert.deepEqual(Buffer.from(signed.message.serialize()), Buffer.from(transfer.message.serialize()));

      // A memo only: no transfers, one program; the member may sign it.
      const memo = new VersionedTransaction(
        MessageV0.compile({
          payerKey: from,
          recentBlockhash: BLOCKHASH,
          instructions: [
            new TransactionInstruction({
              programId: MEMO,
              keys: [{ pubkey: from, isSigner: true, isWritable: true }],
              data: Buffer.from("tooling"),
            }),
          ],
        }),
      );
      const memoSigned = (await signer.signTransaction(memo, solAddress)) as VersionedTransaction;
      assert.ok(ed25519.verify(memoSigned.signatures[0]!, memoSigned.message.serialize(), from.toBytes()));
    });

    it("input that does not parse is 400 and nothing is recorded", async () => {
      const before = await activityCount();
      for (const [unsignedTransaction, type] of [
        ["02c0", "TRANSACTION_TYPE_ETHEREUM"],
        ["not hex", "TRANSACTION_TYPE_ETHEREUM"],
        ["0100", "TRANSACTION_TYPE_SOLANA"],
      ] as const) {
        const err = await rejection(root().signTransaction({ signWith: ethAddress, unsignedTransaction, type }));
        assert.equal(err.code, 3, err.message);
        assert.match(err.message, /parameters\.unsignedTransaction/);
      }
      const tron = await rejection(
        root().signTransaction({ signWith: ethAddress, unsignedTransaction: "00", type: "TRANSACTION_TYPE_TRON" }),
      );
      assert.equal(tron.code, 3, tron.message);
      assert.equal(await activityCount(), before);
    });
  });
}
