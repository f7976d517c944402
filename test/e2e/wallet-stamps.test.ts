// Ethereum-wallet stamps end to end (docs/stamps.md §2.5): @turnkey/wallet-stamper's
// WalletStamper, with a BaseEthereumWallet whose signMessage is a viem local account (a real
// wallet implementation standing in for a browser wallet), stamps @turnkey/http requests for a
// user whose API key is the wallet's compressed secp256k1 key. One real server per engine.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { WalletStamper } from "@turnkey/wallet-stamper";
import {
  engines,
  newInstance,
  sigilInit,
  startServer,
  rejection,
  type InitResult,
  type Instance,
  type RunningServer,
} from "../helpers/server.ts";
import { newWallet } from "../helpers/eth-wallet.ts";

const COMPLETED = "ACTIVITY_STATUS_COMPLETED";
const EIP191 = "SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191";
type HttpSubOrgBody = Parameters<TurnkeyClient["createSubOrganization"]>[0];
type HttpCreateApiKeysBody = Parameters<TurnkeyClient["createApiKeys"]>[0];

const nowMs = () => String(Date.now());

for (const engine of engines()) {
  describe(`wallet (EIP-191) stamps [${engine.name}]`, { skip: engine.skip }, () => {
    let inst: Instance;
    let server: RunningServer;
    let init: InitResult;
    let root: TurnkeyClient;

    before(async () => {
      inst = await newInstance(engine.name);
      init = await sigilInit(inst, ["--name", "Wallet Org"]);
      server = await startServer(inst);
      root = new TurnkeyClient(
        { baseUrl: server.url },
        new ApiKeyStamper({ apiPublicKey: init.apiPublicKey, apiPrivateKey: init.apiPrivateKey }),
      );
    });
    after(async () => {
      await server?.stop();
      await inst?.cleanup();
    });

    it("a sub-org root user whose API key is the wallet's key: whoami through WalletStamper", async () => {
      const { wallet, publicKey } = newWallet();
      const res = await root.createSubOrganization({
        type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
        timestampMs: nowMs(),
        organizationId: init.organizationId,
        parameters: {
          subOrganizationName: `wallet-${randomBytes(3).toString("hex")}`,
          rootUsers: [
            {
              userName: "wally",
              apiKeys: [{ apiKeyName: `wallet-auth:${publicKey}`, publicKey, curveType: "API_KEY_CURVE_SECP256K1" }],
              authenticators: [],
              oauthProviders: [],
            },
          ],
          rootQuorumThreshold: 1,
        },
      } as unknown as HttpSubOrgBody);
      assert.equal(res.activity.status, COMPLETED);
      const result = res.activity.result.createSubOrganizationResultV7 as { subOrganizationId: string; rootUserIds: string[] };
      const walletClient = new TurnkeyClient({ baseUrl: server.url }, new WalletStamper(wallet));
      const me = await walletClient.getWhoami({ organizationId: result.subOrganizationId });
      assert.equal(me.organizationId, result.subOrganizationId);
      assert.equal(me.userId, result.rootUserIds[0]);
      assert.equal(me.username, "wally");
    });

    it("a top-level user's wallet key creates a sub-organization; the vote records the EIP-191 scheme", async () => {
      const { wallet, publicKey } = newWallet();
      const added = await root.createApiKeys({
        type: "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
        timestampMs: nowMs(),
        organizationId: init.organizationId,
        parameters: { userId: init.userId, apiKeys: [{ apiKeyName: "metamask", publicKey, curveType: "API_KEY_CURVE_SECP256K1" }] },
      } as unknown as HttpCreateApiKeysBody);
      assert.equal(added.activity.status, COMPLETED);

      const walletClient = new TurnkeyClient({ baseUrl: server.url }, new WalletStamper(wallet));
      const res = await walletClient.createSubOrganization({
        type: "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
        timestampMs: nowMs(),
        organizationId: init.organizationId,
        parameters: {
          subOrganizationName: `by-wallet-${randomBytes(3).toString("hex")}`,
          rootUsers: [{ userName: "child", apiKeys: [], authenticators: [], oauthProviders: [] }],
          rootQuorumThreshold: 1,
        },
      } as unknown as HttpSubOrgBody);
      assert.equal(res.activity.status, COMPLETED);
      const votes = res.activity.votes as { user: { userId: string }; publicKey: string; scheme: string }[];
      assert.equal(votes.length, 1);
      assert.equal(votes[0]!.publicKey, publicKey);
      assert.equal(votes[0]!.scheme, EIP191);
      assert.equal(votes[0]!.user.userId, init.userId);
    });

    it("a wallet stamp over another body, or a wallet whose key is not registered, is refused", async () => {
      const { wallet } = newWallet();
      const stranger = new TurnkeyClient({ baseUrl: server.url }, new WalletStamper(wallet));
      const unknown = await rejection(stranger.getWhoami({ organizationId: init.organizationId }));
      assert.match(unknown.message, /could not find public key in organization or its parent organization/);

      const body = JSON.stringify({ organizationId: init.organizationId });
      const stamp = await new WalletStamper(wallet).stamp(body);
      const res = await fetch(`${server.url}/public/v1/query/whoami`, {
        method: "POST",
        headers: { "content-type": "application/json", [stamp.stampHeaderName]: stamp.stampHeaderValue },
        body: JSON.stringify({ organizationId: init.organizationId, x: 1 }),
      });
      assert.equal(res.status, 401);
      assert.match(((await res.json()) as { message: string }).message, /could not verify api key signature/);
    });
  });
}
