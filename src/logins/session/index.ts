// Session login (docs/logins.md §2): stamp_login turns whatever signed the request — an API
// key, a session key (refresh), a passkey or an attested stamp — into a session key of the
// stamping user. The other methods' logins end in the same session rules (activities/sessions/create-session.ts);
// this method owns their one knob.
import { defineKnob, int } from "../../config/define.ts";
import { defineLoginMethod } from "../define.ts";

export const session = defineLoginMethod({
  name: "session",
  doc: "docs/logins.md §2",
  activities: ["ACTIVITY_TYPE_STAMP_LOGIN", "ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2", "ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION"],
  // A parent's own stamp_login logs in the parent's user, never the sub-organization's (docs/request-path.md §5.2);
  // so does its create_read_write_session (docs/sessions-and-network.md §7.1).
  parentStampable: [{ type: "ACTIVITY_TYPE_STAMP_LOGIN" }, { type: "ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION", everyVersion: true }],
  knobs: [
    defineKnob({
      env: "SIGIL_SESSION_MAX_SECONDS",
      flag: "--session-max-seconds",
      key: "sessionMaxSeconds",
      parse: int("SIGIL_SESSION_MAX_SECONDS", 60, 365 * 86400),
      default: 30 * 86400,
      doc: {
        meaning:
          "The longest session a login may ask for (`expirationSeconds`, 1 s up to this; default 900 s). Longer → 400 `invalid api key expiration`",
        default: "`2592000` (30 d)",
      },
    }),
  ],
  settings: (config) => ({ sessionMaxSeconds: config.sessionMaxSeconds }),
});
