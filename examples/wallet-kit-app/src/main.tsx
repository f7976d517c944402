// A browser app with no backend on @turnkey/react-wallet-kit, pointed at Sigil
// (examples/wallet-kit-app/README.md): the kit's own modals for login and sign-up (passkey,
// email OTP, Ethereum wallet), signing, export and import; Sigil's API and auth proxy behind
// them; the export and import frames Sigil serves on an origin of their own.
import { StrictMode, useState } from "react";
import { createRoot } from "react-dom/client";
import { AuthState, ClientState, TurnkeyProvider, useTurnkey, WalletSource, type TurnkeyProviderConfig } from "@turnkey/react-wallet-kit";
import "@turnkey/react-wallet-kit/styles.css";
import { configureSigil } from "@sigil/client/turnkey-crypto";
import { serializeTransaction, type Hex } from "viem";

/** What the deployment tells the app: config.json next to index.html (config.example.json). */
interface AppConfig {
  apiBaseUrl: string;
  authProxyUrl: string;
  authProxyConfigId: string;
  organizationId: string;
  exportIframeUrl: string;
  importIframeUrl: string;
}

const config = (await (await fetch("./config.json")).json()) as AppConfig;
// The kit's OTP modal encrypts the code to Sigil's OTP key: the build aliases @turnkey/crypto to
// @sigil/client/turnkey-crypto (build.mjs), which needs to know where the keys are published.
configureSigil({ apiBaseUrl: config.apiBaseUrl });

const providerConfig: TurnkeyProviderConfig = {
  apiBaseUrl: config.apiBaseUrl,
  authProxyUrl: config.authProxyUrl,
  authProxyConfigId: config.authProxyConfigId,
  organizationId: config.organizationId,
  exportIframeUrl: config.exportIframeUrl,
  importIframeUrl: config.importIframeUrl,
  // Log in and sign up with a browser wallet (EIP-6963 on Ethereum); no wallet connecting.
  walletConfig: { features: { auth: true, connecting: false }, chains: { ethereum: { native: true } } },
};

/** A demo EIP-1559 transaction from `from` to itself: signed, never sent. */
function demoTransaction(from: string): Hex {
  return serializeTransaction({
    type: "eip1559",
    chainId: 11155111,
    nonce: 0,
    to: from as Hex,
    value: 1n,
    gas: 21000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
}

/** An error and its causes, one line. */
function causes(e: unknown): string {
  const chain: string[] = [];
  for (let c = e, i = 0; c && i < 5; c = (c as { cause?: unknown }).cause, i++)
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a cause that is not an Error shows as it stringifies
    chain.push(c instanceof Error ? c.message : String(c));
  return chain.join(" <- ");
}

function App() {
  const tk = useTurnkey();
  const [message, setMessage] = useState("Hello from a Sigil app");
  const [result, setResult] = useState<{ kind: string; address: string; value: unknown } | undefined>();
  const [error, setError] = useState<string | undefined>();

  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await fn();
    } catch (e) {
      setError(`${what}: ${causes(e)}`);
    }
  };
  // A click handler returns nothing: attempt() shows every failure in the page.
  const run = (what: string, fn: () => Promise<unknown>) => () => void attempt(what, fn);
  const embedded = tk.wallets.filter((w) => w.source !== WalletSource.Connected);

  return (
    <main data-client-state={tk.clientState ?? ""} data-auth-state={tk.authState}>
      <h1>Sigil wallet kit app</h1>
      {tk.clientState !== ClientState.Ready ? (
        <p>Loading…</p>
      ) : tk.authState !== AuthState.Authenticated ? (
        <button id="login" onClick={run("login", () => tk.handleLogin())}>
          Log in or sign up
        </button>
      ) : (
        <section>
          <p id="who" data-user-id={tk.session?.userId} data-organization-id={tk.session?.organizationId}>
            Signed in as <strong>{tk.user?.userName ?? tk.session?.userId}</strong>
          </p>
          <p>
            <button
              id="create-wallet"
              onClick={run("create wallet", async () => {
                await tk.createWallet({ walletName: `Wallet ${embedded.length + 1}`, accounts: ["ADDRESS_FORMAT_ETHEREUM"] });
                await tk.refreshWallets();
              })}
            >
              Create wallet
            </button>{" "}
            <button
              id="import-wallet"
              onClick={run("import", async () => {
                await tk.handleImportWallet({
                  defaultWalletAccounts: ["ADDRESS_FORMAT_ETHEREUM"],
                  walletName: `Imported ${embedded.length + 1}`,
                });
                await tk.refreshWallets();
              })}
            >
              Import wallet
            </button>{" "}
            <button
              id="logout"
              onClick={run("logout", async () => {
                setResult(undefined);
                await tk.logout();
              })}
            >
              Log out
            </button>
          </p>
          <label>
            Message <input id="message" value={message} onChange={(e) => setMessage(e.target.value)} />
          </label>
          <ul id="wallets">
            {embedded.map((w) => (
              <li key={w.walletId} className="wallet" data-wallet-id={w.walletId} data-wallet-name={w.walletName}>
                <strong>{w.walletName}</strong>{" "}
                <button className="export" onClick={run("export", () => tk.handleExportWallet({ walletId: w.walletId }))}>
                  Export
                </button>
                <ul>
                  {w.accounts.map((a) => (
                    <li key={a.address} className="account" data-address={a.address}>
                      <code>{a.address}</code>{" "}
                      <button
                        className="sign-message"
                        onClick={run("sign message", async () => {
                          const s = await tk.handleSignMessage({ walletAccount: a, message, addEthereumPrefix: true });
                          setResult({ kind: "message", address: a.address, value: { message, ...s } });
                        })}
                      >
                        Sign message
                      </button>{" "}
                      <button
                        className="sign-transaction"
                        onClick={run("sign transaction", async () => {
                          const unsignedTransaction = demoTransaction(a.address);
                          const signed = await tk.signTransaction({
                            walletAccount: a,
                            unsignedTransaction,
                            transactionType: "TRANSACTION_TYPE_ETHEREUM",
                          });
                          setResult({ kind: "transaction", address: a.address, value: { unsignedTransaction, signed } });
                        })}
                      >
                        Sign transaction
                      </button>
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </section>
      )}
      {result && (
        <pre id="result" data-kind={result.kind} data-address={result.address}>
          {JSON.stringify(result.value, null, 2)}
        </pre>
      )}
      {error && (
        <p id="error" role="alert">
          {error}
        </p>
      )}
    </main>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <TurnkeyProvider config={providerConfig} callbacks={{ onError: (e) => console.error("turnkey:", causes(e)) }}>
      <App />
    </TurnkeyProvider>
  </StrictMode>,
);
