// The network checks of an authenticated request, run right after the credential is found
// and before anything in the body is validated or any policy consulted: the IP allowlist of
// the credential's organization (root organizations only), then the caller's rate limits.
// A refused request creates nothing (docs/network.md §1).
import { sql } from "kysely";
import { ApiError, Grpc } from "../errors.ts";
import type { Principal } from "../auth/principal.ts";
import type { Rider } from "../auth/strategy.ts";
import { strategyOf } from "../auth/strategies.ts";
import type { Db } from "../store/schema.ts";
import { parseAddress } from "./address.ts";
import { admits } from "./allowlist.ts";
import type { AllowlistCache } from "./allowlist-cache.ts";
import type { Caller, RequestNetwork } from "./request-network.ts";

export interface NetworkFacts {
  /** organizations.ip_allowlist_version of the credential's organization. */
  allowlistVersion: number;
  /** That organization has no parent: only roots' lists are evaluated. */
  isRoot: boolean;
}

export interface WithNetwork<T> {
  inner: T;
  network: NetworkFacts;
}

const wrapped = new Map<Rider<unknown>, Rider<WithNetwork<unknown>>>();

/** The caller's rider plus two columns of the credential's organization (same statement). */
export function withNetworkFacts<T>(rider: Rider<T>): Rider<WithNetwork<T>> {
  let w = wrapped.get(rider as Rider<unknown>);
  if (!w) {
    w = {
      columns: (db) => [
        ...rider.columns(db),
        sql<number>`organizations.ip_allowlist_version`.as("net_allowlist_version"),
        sql<string | null>`organizations.parent_id`.as("net_parent_id"),
      ],
      // Its own columns are the credential's organization's (store/credential-watch.ts lists them).
      ...(rider.memo === true ? { memo: true } : {}),
      read: (row) => {
        // A strategy that dropped the rider's columns would silently skip the allowlist: fail loudly.
        if (!("net_allowlist_version" in row))
          throw new Error("authentication strategy did not select the rider's columns (network facts)");
        return {
          inner: rider.read(row),
          network: {
            allowlistVersion: Number(row.net_allowlist_version ?? 0),
            isRoot: row.net_parent_id === null || row.net_parent_id === undefined,
          },
        };
      },
    };
    wrapped.set(rider as Rider<unknown>, w);
  }
  return w as Rider<WithNetwork<T>>;
}

export function permissionDenied(message: string): ApiError {
  return new ApiError(Grpc.PERMISSION_DENIED, "FORBIDDEN", message);
}

/**
 * The key list that applies: the one the signing strategy names — for an API key (or session
 * key) the key's own, or the creating key's for a session (docs/sessions-and-network.md §1);
 * none for the other kinds.
 */
export function listKeyOf(principal: Principal): string | undefined {
  return strategyOf(principal).allowlistKey(principal);
}

/** Where a request came from, as a new activity's handler sees it (ExecuteContext.caller). */
export function callerOf(network: RequestNetwork | undefined, principal: Principal): Caller {
  return { address: network?.address, publicKey: listKeyOf(principal) };
}

/** Nothing to wait for (the common case: no list, in-memory buckets), or a promise. */
export function enforceNetwork(
  db: Db,
  cache: AllowlistCache,
  network: RequestNetwork | undefined,
  principal: Principal,
  facts: NetworkFacts,
): void | Promise<void> {
  const publicKey = listKeyOf(principal);
  // The per-credential bucket is the strategy's to name (docs/network.md §3.1).
  const limit = () => network?.limiter?.caller(strategyOf(principal).rateLimitKey(principal), principal.actor.organizationId);
  // The auth proxy's key is exempt from the organization's allowlist (docs/auth-proxy.md §3).
  if (!facts.isRoot || facts.allowlistVersion === 0 || principal.credential.authProxy) return limit();
  return cache.get(db, principal.actor.organizationId, facts.allowlistVersion).then((lists) => {
    const address = network?.address !== undefined ? parseAddress(network.address) : undefined;
    if (!admits(lists, publicKey, address)) {
      throw permissionDenied(
        `requests from IP address ${network?.address ?? "(unknown)"} are not allowed by the IP allowlist of organization ${principal.actor.organizationId}`,
      );
    }
    return limit();
  });
}
