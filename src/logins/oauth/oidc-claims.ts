// An OAuth identity named by its claims rather than a token: list_suborgs' OIDC_CLAIMS filter
// and the auth proxy's /v1/account (docs/auth-proxy-service.md §2.2).
import { invalid } from "../../errors.ts";

/** OIDC_CLAIMS' filter value: JSON with string iss, sub and aud. */
export function oidcClaims(value: string): { iss: string; sub: string; aud: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const o = parsed as Record<string, unknown> | undefined;
  if (
    !o ||
    typeof o !== "object" ||
    Array.isArray(o) ||
    typeof o.iss !== "string" ||
    typeof o.sub !== "string" ||
    typeof o.aud !== "string" ||
    !o.iss ||
    !o.sub ||
    !o.aud
  ) {
    throw invalid("filterValue of OIDC_CLAIMS must be JSON {iss, sub, aud} with non-empty strings", [
      { field: "filterValue", description: "JSON {iss, sub, aud}" },
    ]);
  }
  return { iss: o.iss, sub: o.sub, aud: o.aud };
}
