/// <reference lib="dom" />
// The export frame (docs/frames.md §3.1, §3.3): a P-256 key made here when the page loads,
// kept in this page's memory only, its public half sent up as PUBLIC_KEY_READY (the app passes
// it to export_wallet / export_wallet_account / export_private_key as targetPublicKey); the
// bundle the app injects is checked against the deployment's BUNDLE_SIGNER keys and the
// organization, opened with that key, and the mnemonic or key shown here — nothing but
// `true` goes back to the parent. The key opens one bundle and is then dropped.
import { p256 } from "@noble/curves/nist.js";
import { decryptExportBundle } from "../../../lib/client/client.mjs";
import { encodeKey, keyFormatOf } from "../key-formats.ts";
import { parseSettings } from "../styles.ts";
import { applyStyles, bundleSignerKeys, readConfig, serveChannel, setStatus, stringField } from "./frame.ts";

/** What separates a mnemonic from its passphrase in a wallet's bundle (docs/frames.md §3.2). */
const PASSPHRASE_SEPARATOR = "\n--PASS--\n";

const toHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

let secret: Uint8Array | undefined = p256.utils.randomSecretKey();
const publicKeyHex = toHex(p256.getPublicKey(secret, false));

/** The embedded key as decryptExportBundle takes it; dropped after one use, whatever the outcome. */
function takeKey(): string {
  if (!secret) throw new Error("this frame's key has been used; reload the frame for another export");
  const hex = toHex(secret);
  secret.fill(0);
  secret = undefined;
  return hex;
}

function show(text: string, passphrase?: string): void {
  const keyDiv = document.getElementById("key-div")!;
  keyDiv.textContent = text;
  keyDiv.hidden = false;
  if (passphrase !== undefined) {
    document.getElementById("passphrase-value")!.textContent = passphrase;
    document.getElementById("passphrase-div")!.hidden = false;
  }
  setStatus("", "shown");
}

async function open(message: Record<string, unknown>, returnMnemonic: boolean): Promise<string> {
  const exportBundle = stringField(message, "value");
  const organizationId = stringField(message, "organizationId", 200);
  const signerPublicKeys = await bundleSignerKeys(config!);
  return decryptExportBundle({ exportBundle, embeddedKey: takeKey(), organizationId, returnMnemonic, signerPublicKeys });
}

const config = readConfig();
if (!config) {
  secret.fill(0);
  secret = undefined;
  setStatus("This frame is not configured (config.js).", "unconfigured");
} else {
  setStatus(window.parent === window ? "Open this page from the app: it works only inside it." : "Waiting for the app…", "waiting");
  serveChannel(config, () => publicKeyHex, {
    INJECT_WALLET_EXPORT_BUNDLE: {
      reply: "BUNDLE_INJECTED",
      async run(message) {
        const text = await open(message, true);
        const at = text.indexOf(PASSPHRASE_SEPARATOR);
        if (at >= 0) show(text.slice(0, at), text.slice(at + PASSPHRASE_SEPARATOR.length));
        else show(text);
        return true;
      },
    },
    INJECT_KEY_EXPORT_BUNDLE: {
      reply: "BUNDLE_INJECTED",
      async run(message) {
        // The format is checked before the key is spent on the bundle.
        const format = keyFormatOf(Object.hasOwn(message, "keyFormat") ? message.keyFormat : undefined);
        const hex = await open(message, false);
        const key = Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
        try {
          show(encodeKey(key, format));
        } finally {
          key.fill(0);
        }
        return true;
      },
    },
    APPLY_SETTINGS: {
      reply: "SETTINGS_APPLIED",
      async run(message) {
        applyStyles(document.getElementById("key-div")!, parseSettings(Object.hasOwn(message, "value") ? message.value : undefined));
        return true;
      },
    },
  });
}
