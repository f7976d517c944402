/// <reference lib="dom" />
// The import frame (docs/frames.md §3.1, §3.2): the app injects init_import_wallet's (or
// init_import_private_key's) importBundle; the frame checks it against the deployment's
// BUNDLE_SIGNER keys, the organization and the user, keeps its target key, and on EXTRACT_*
// encrypts what was typed here to that target — the parent receives only the ciphertext
// ({"encappedPublic","ciphertext"}, import_wallet's / import_private_key's encryptedBundle).
import { validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { decodeKey, keyFormatOf } from "../key-formats.ts";
import { parseSettings } from "../styles.ts";
import { applyStyles, bundleSignerKeys, readConfig, serveChannel, setStatus, stringField } from "./frame.ts";
// @ts-expect-error -- lib/client/src is JSDoc-typed JavaScript (checked by tsconfig.lib.json), without a .d.mts
import * as bundles from "../../../lib/client/src/bundles.mjs";

const { verifySignedBundle, hpkeSealToText } = bundles as {
  verifySignedBundle(text: string, keys: readonly string[], what: string, purpose: string): Record<string, unknown>;
  hpkeSealToText(recipientHex: string, plaintext: Uint8Array): Promise<string>;
};

/** How the hosted import frame joins a mnemonic and its passphrase (docs/frames.md §3.2). */
const PASSPHRASE_SEPARATOR = "\n--PASS--\n";

/** The target of the injected bundle; used by one EXTRACT_*, then dropped. */
let target: string | undefined;

/** The target, checked before the typed text is read; `seal` drops it once it has encrypted. */
function withTarget(): { seal(plaintext: Uint8Array): Promise<string> } {
  const t = target;
  if (!t) throw new Error("no import bundle injected (or it was used already)");
  return {
    async seal(plaintext) {
      const sealed = await hpkeSealToText(t, plaintext);
      if (target === t) target = undefined;
      return sealed;
    },
  };
}

const field = (id: string): HTMLTextAreaElement | HTMLInputElement => document.getElementById(id) as HTMLTextAreaElement;

// What was pasted into the frame is wiped from the clipboard (the stamper grants the frame
// clipboard-write for this, its clearClipboardOnPaste option); without the permission, nothing.
for (const id of ["plaintext", "passphrase"]) {
  field(id).addEventListener("paste", () => {
    setTimeout(() => void navigator.clipboard?.writeText("").catch(() => undefined), 0);
  });
}

const config = readConfig();
if (!config) {
  setStatus("This frame is not configured (config.js).", "unconfigured");
} else {
  setStatus(window.parent === window ? "Open this page from the app: it works only inside it." : "", "waiting");
  // The stamper's init waits for a public key; an import needs none of the frame's (as upstream: "").
  serveChannel(config, () => "", {
    INJECT_IMPORT_BUNDLE: {
      reply: "BUNDLE_INJECTED",
      async run(message) {
        const importBundle = stringField(message, "value");
        const organizationId = stringField(message, "organizationId", 200);
        const userId = stringField(message, "userId", 200);
        const signed = verifySignedBundle(importBundle, await bundleSignerKeys(config), "importBundle", "BUNDLE_SIGNER");
        if (signed.organizationId !== organizationId) throw new Error("importBundle is for another organization");
        if (signed.userId !== userId) throw new Error("importBundle is for another user");
        if (typeof signed.targetPublic !== "string" || !/^04[0-9a-fA-F]{128}$/.test(signed.targetPublic)) {
          throw new Error("importBundle data must name an uncompressed P-256 targetPublic");
        }
        target = signed.targetPublic;
        return true;
      },
    },
    EXTRACT_WALLET_ENCRYPTED_BUNDLE: {
      reply: "ENCRYPTED_BUNDLE_EXTRACTED",
      async run() {
        const to = withTarget();
        const typed = field("plaintext").value;
        if (typed.length > 1_000) throw new Error("the mnemonic is too long");
        // Any whitespace between the words, as the server reads it; one space in the bundle.
        const mnemonic = typed.trim().split(/\s+/).join(" ").toLowerCase();
        if (!mnemonic) throw new Error("no wallet mnemonic entered");
        if (!validateMnemonic(mnemonic, wordlist))
          throw new Error("not a valid English BIP-39 mnemonic (12–24 words with a valid checksum)");
        const passphrase = field("passphrase").value;
        if (passphrase.length > 1_000) throw new Error("the passphrase is too long");
        if (passphrase.includes(PASSPHRASE_SEPARATOR)) throw new Error("the passphrase cannot contain the separator line --PASS--");
        const text = passphrase === "" ? mnemonic : `${mnemonic}${PASSPHRASE_SEPARATOR}${passphrase}`;
        return to.seal(new TextEncoder().encode(text));
      },
    },
    EXTRACT_KEY_ENCRYPTED_BUNDLE: {
      reply: "ENCRYPTED_BUNDLE_EXTRACTED",
      async run(message) {
        const to = withTarget();
        const key = decodeKey(field("plaintext").value, keyFormatOf(Object.hasOwn(message, "keyFormat") ? message.keyFormat : undefined));
        try {
          return await to.seal(key);
        } finally {
          key.fill(0);
        }
      },
    },
    APPLY_SETTINGS: {
      reply: "SETTINGS_APPLIED",
      async run(message) {
        const styles = parseSettings(Object.hasOwn(message, "value") ? message.value : undefined);
        applyStyles(field("plaintext"), styles);
        return true;
      },
    },
  });
}
