// What the auth proxy's key may sign (docs/auth-proxy.md §3): the forwarded activity types and
// the forwarded queries, nothing else — no vote, no configuration, no read of the organization
// beyond the look-ups the proxy makes. Its policies say the same for activities; this gate
// holds whatever policies a root user adds or deletes, and it is what keeps the key from
// voting (a policy naming the proxy user in its consensus makes it an eligible voter,
// docs/policy-language.md §6.5).
import { permissionDenied } from "../errors.ts";
import type { Principal } from "../auth/principal.ts";
import { FORWARDED_ACTIVITY_TYPES, FORWARDED_QUERIES } from "./forwarded.ts";

const TYPES: ReadonlySet<string> = new Set(FORWARDED_ACTIVITY_TYPES);
const QUERIES: ReadonlySet<string> = new Set(FORWARDED_QUERIES);

/** Throws 403 when the auth proxy's key signs a route the proxy does not forward. */
export function refuseOutsideProxyScope(principal: Principal, route: { activityType: string } | { query: string }): void {
  if (!principal.credential.authProxy) return;
  if ("activityType" in route ? TYPES.has(route.activityType) : QUERIES.has(route.query)) return;
  const what = "activityType" in route ? `activity type ${route.activityType}` : `query ${route.query}`;
  throw permissionDenied(`the auth proxy's key may not sign ${what}: it signs only what the proxy forwards`);
}
