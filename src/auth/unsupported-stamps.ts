// Stamp kinds the clients send that this server does not verify yet: passkeys
// (X-Stamp-WebAuthn, WIRE-NOTES §2) and @turnkey/core's attested stamps (§2.4). They are
// registered like any strategy, so that "exactly one stamp header" counts them, and answer
// 501 until their strategies are written.
import { unimplemented } from "../errors.ts";
import type { StampStrategy } from "./strategy.ts";

export function notYetSupported(header: string): StampStrategy {
  return {
    header,
    verify() {
      return Promise.reject(
        unimplemented(`${header} stamps are not supported by this server yet; sign the request with an API key (X-Stamp)`),
      );
    },
  };
}
