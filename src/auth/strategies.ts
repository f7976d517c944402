// The authentication strategies, chosen by stamp header: a request carries exactly one.
import type { IncomingHttpHeaders } from "node:http";
import { unauthenticated } from "../errors.ts";
import { apiKeyStamps } from "./api-key-stamp.ts";
import { webauthnStamps } from "./webauthn-stamp.ts";
import type { LoginSettings } from "./login-settings.ts";
import { attestedStamps } from "./attested-stamp.ts";
import type { StampStrategy, VerifiedStamp } from "./strategy.ts";

/** In the order errors name them. Adding a stamp kind = its strategy + one line here. */
const STRATEGIES: readonly StampStrategy[] = [
  apiKeyStamps,
  webauthnStamps,
  attestedStamps,
];

function chooseStrategy(headers: IncomingHttpHeaders): { strategy: StampStrategy; value: string | string[] } {
  const present = STRATEGIES.filter((s) => headers[s.header] !== undefined);
  if (present.length === 0) {
    throw unauthenticated(
      "SIGNATURE_MISSING",
      "cannot authenticate public API request without a stamp (X-Stamp/X-Stamp-WebAuthn header)",
    );
  }
  if (present.length > 1) {
    throw unauthenticated("UNAUTHENTICATED", `exactly one stamp header is allowed, got ${present.map((s) => s.header).join(", ")}`);
  }
  const strategy = present[0]!;
  return { strategy, value: headers[strategy.header]! };
}

/** The request's stamp, its signature verified over the raw body; to be resolved to a Principal. */
export async function verifyStamp(headers: IncomingHttpHeaders, rawBody: Buffer, logins?: LoginSettings): Promise<VerifiedStamp> {
  const { strategy, value } = chooseStrategy(headers);
  return strategy.verify(value, rawBody, logins);
}
