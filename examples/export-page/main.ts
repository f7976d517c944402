// The page: @turnkey/core's TurnkeyClient, logged in on this origin (core keeps the session
// and its key in this origin's storage: log in here, or serve this page from the app's
// origin), lists the user's wallets; "Export" runs exportMnemonic (export.ts) and shows the
// mnemonic in the page only. Configuration from the query string:
//   ?api=<Sigil API base URL>&org=<the app's (parent) organization id>
import { TurnkeyClient, WalletSource } from "@turnkey/core";
import { exportMnemonic } from "./export.ts";

const query = new URLSearchParams(location.search);
const apiBaseUrl = query.get("api") ?? "http://localhost:8080";
const organizationId = query.get("org") ?? "";

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const status = (text: string) => (byId("status").textContent = text);

async function main(): Promise<void> {
  const client = new TurnkeyClient({ apiBaseUrl, organizationId });
  await client.init();
  const session = await client.getSession();
  if (!session) {
    status("No session on this origin: log in with @turnkey/core first.");
    return;
  }
  const select = byId<HTMLSelectElement>("wallet");
  for (const w of await client.fetchWallets()) {
    if (w.source !== WalletSource.Embedded) continue;
    select.add(new Option(w.walletName, w.walletId));
  }
  const button = byId<HTMLButtonElement>("export");
  button.disabled = select.options.length === 0;
  // It catches every failure and shows it: nothing for the click to wait on.
  const exportSelected = async () => {
    button.disabled = true;
    status("Exporting…");
    try {
      // The wallet lives in the user's sub-organization: the session names it.
      const mnemonic = await exportMnemonic(client, { apiBaseUrl, walletId: select.value, organizationId: session.organizationId });
      byId("mnemonic").textContent = mnemonic;
      status("Write these words down; they are not kept anywhere. Close the page when done.");
    } catch (err) {
      status(`Export failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      button.disabled = false;
    }
  };
  button.addEventListener("click", () => void exportSelected());
  status(`Logged in as user ${session.userId}.`);
}

main().catch((err) => status(`Could not start: ${err instanceof Error ? err.message : String(err)}`));
