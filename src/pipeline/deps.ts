// What the pipelines are given by the server (server/app.ts builds it once).
import type { Db } from "../store/schema.ts";
import type { Transact } from "../store/transactions.ts";
import type { MasterKey } from "../crypto/envelope.ts";
import type { ServiceState } from "../service-state.ts";
import type { LoginSettings } from "../logins/settings.ts";
import type { WebhookUrlPolicy } from "../webhooks/url-policy.ts";

export interface PipelineDeps {
  db: Db;
  /** The store's caches (organization chains, governance, webhook listeners, the proof key). */
  state: ServiceState;
  /** Runs an activity's writes all-or-nothing. */
  transact: Transact;
  timestampMaxAgeMs: number;
  timestampMaxFutureMs: number;
  /** Where policy runtime errors are reported (never blocking: an erroring policy has no effect). */
  log?: { warn(obj: object, msg: string): void };
  /** Called after a commit that wrote webhook events (wakes the dispatcher). */
  onEvents?: () => void;
  /** Opens the app-proof signing key (submissions with generateAppProofs). */
  masterKey?: MasterKey;
  now?: () => number;
  /** Sessions, passkeys and OTP delivery (default: no OTP transport, any RP id and origin). */
  logins?: LoginSettings;
  /** SIGIL_TVC_IMAGE_ROOT (real path); undefined: TVC is off and every TVC activity is refused (docs/tvc-isolation.md §1). */
  tvcImageRoot?: string;
  /** Where webhook endpoints may point (absent: public https only, STRICT_WEBHOOK_URLS). */
  webhookUrls?: WebhookUrlPolicy;
}
