// An Ethereum wallet for tests, as @turnkey/wallet-stamper's WalletStamper uses one: a
// BaseEthereumWallet whose personal_sign is a viem local account (a real secp256k1 key), and
// its compressed public key — what core names the wallet's API key with (docs/stamps.md §2.5).
import { BaseEthereumWallet } from "@turnkey/wallet-stamper";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { secp256k1 } from "@noble/curves/secp256k1.js";

/** The wallet: personal_sign by a viem local account. */
export class ViemWallet extends BaseEthereumWallet {
  constructor(private readonly account: PrivateKeyAccount) {
    super();
  }
  async signMessage(message: string): Promise<`0x${string}`> {
    return this.account.signMessage({ message });
  }
}

export function newWallet(): { wallet: ViemWallet; publicKey: string } {
  const pk = generatePrivateKey();
  const publicKey = Buffer.from(secp256k1.getPublicKey(Buffer.from(pk.slice(2), "hex"), true)).toString("hex");
  return { wallet: new ViemWallet(privateKeyToAccount(pk)), publicKey };
}
