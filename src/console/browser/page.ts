/// <reference lib="dom" />
// What the shell hands every page (docs/console.md §5), and the hash routes' parsing.
import type { Api } from "./api.ts";
import type { Session } from "./credentials.ts";

export interface Me {
  organizationId: string;
  organizationName: string;
  userId: string;
  username: string;
}

export interface PageProps {
  api: Api;
  session: Session;
  me: Me;
  /** The organization the URL names. */
  orgId: string;
  /** The route's named parts (userId, activityId, policyId). */
  params: Record<string, string>;
  /** The hash's query string. */
  query: URLSearchParams;
  /** Not the user's own organization: nothing is submitted there (a sub-organization opened from its parent). */
  readOnly: boolean;
}

export interface Route {
  /** `org/:orgId/users/:userId`: segments after #/, `:name` parts captured. */
  pattern: string;
  nav?: string;
  page: (p: PageProps) => import("./ui.ts").VNode | null;
}

export interface Location {
  path: string[];
  query: URLSearchParams;
}

/** `#/org/abc/activities?status=x` → {path: [org, abc, activities], query}. */
export function parseHash(hash: string): Location {
  const raw = hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  const path = (q < 0 ? raw : raw.slice(0, q))
    .split("/")
    .filter((s) => s !== "")
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  return { path, query: new URLSearchParams(q < 0 ? "" : raw.slice(q + 1)) };
}

/** The route matching `path`, with its captured parts (a Map: URL-named keys never reach Object.prototype). */
export function match(routes: readonly Route[], path: string[]): { route: Route; params: Map<string, string> } | undefined {
  for (const route of routes) {
    const parts = route.pattern.split("/");
    if (parts.length !== path.length) continue;
    const params = new Map<string, string>();
    if (parts.every((p, i) => (p.startsWith(":") ? (params.set(p.slice(1), path[i]!), true) : p === path[i]))) return { route, params };
  }
  return undefined;
}

export function navigate(hash: string): void {
  if (location.hash !== hash) location.hash = hash;
}
