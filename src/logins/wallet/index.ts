// Wallet login (docs/stamps.md §2.2): a user whose API key is a wallet's secp256k1 or ed25519
// key signs stamp_login with an X-Stamp (auth/api-key-stamp.ts); nothing beyond the stamp
// scheme is specific to it, so it opens nothing to parents and has no knob of its own.
import { defineLoginMethod } from "../define.ts";

export const wallet = defineLoginMethod({
  name: "wallet",
  doc: "docs/stamps.md §2.2",
  activities: ["ACTIVITY_TYPE_STAMP_LOGIN"],
  parentStampable: [],
  knobs: [],
  settings: () => ({}),
});
