// Wallet login (docs/stamps.md §2.2): a user whose API key is a wallet's secp256k1 or ed25519
// key signs stamp_login with an X-Stamp (auth/api-key-stamp.ts); nothing beyond the stamp
// scheme is specific to it, so it opens nothing to parents. Its one knob is how long a key
// registration nobody has vouched for or used may still receive a login naming the parent
// (docs/login-lookups.md §3): core signs a wallet up through the auth proxy and logs it in
// straight after.
import { defineKnob, secondsAsMs } from "../../config/define.ts";
import { DEFAULT_UNPROVED_KEY_WINDOW_MS } from "../settings.ts";
import { defineLoginMethod } from "../define.ts";

export const wallet = defineLoginMethod({
  name: "wallet",
  doc: "docs/stamps.md §2.2",
  activities: ["ACTIVITY_TYPE_STAMP_LOGIN"],
  parentStampable: [],
  knobs: [
    defineKnob({
      env: "SIGIL_UNPROVED_KEY_LOGIN_WINDOW_SECONDS",
      flag: "--unproved-key-login-window-seconds",
      key: "unprovedKeyWindowMs",
      parse: secondsAsMs("SIGIL_UNPROVED_KEY_LOGIN_WINDOW_SECONDS", 0, 86400),
      default: DEFAULT_UNPROVED_KEY_WINDOW_MS,
      doc: {
        meaning:
          "How long after its registration an API key that neither the app's backend registered nor has yet stamped, and that is not its organization's only way in, may receive a stamp naming an organization above its own; after that only trusted, proved or sole registrations do ([docs/login-lookups.md §3](login-lookups.md#3-passkeys-and-api-keys-found-below-the-parent)). `0`: never",
        default: "`120` (2 min)",
      },
    }),
  ],
  settings: (config) => ({ unprovedKeyWindowMs: config.unprovedKeyWindowMs }),
});
