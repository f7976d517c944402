// How /v1/account's filter types map to the public API's sub-organization queries
// (docs/auth-proxy-service.md §2.2). Pure: the endpoint runs the query this returns.
import { invalid } from "../errors.ts";
import { oidcClaims } from "../logins/oauth/oidc-claims.ts";

export type AccountFilterType =
  "EMAIL" | "PHONE_NUMBER" | "OIDC_TOKEN" | "PUBLIC_KEY" | "OIDC_CLAIMS" | "CREDENTIAL_ID" | "NAME" | "USERNAME";

/** The query and filter one look-up runs in the config's organization. */
export interface AccountLookup {
  query: "list_suborgs" | "list_verified_suborgs";
  filterType: string;
  filterValue: string;
  /** EMAIL / PHONE_NUMBER: the contact, which a config may require a verification token for. */
  contact?: { type: "OTP_TYPE_EMAIL" | "OTP_TYPE_SMS"; value: string };
}

const SIMPLE = new Map<string, string>([
  ["OIDC_TOKEN", "OIDC_TOKEN"],
  ["PUBLIC_KEY", "PUBLIC_KEY"],
  ["CREDENTIAL_ID", "CREDENTIAL_ID"],
  ["NAME", "NAME"],
  ["USERNAME", "USERNAME"],
]);

/**
 * The look-up for one /v1/account request. EMAIL and PHONE_NUMBER with a verification token
 * ask list_verified_suborgs (the token proves the contact; only sub-organizations where it
 * was verified answer), without one list_suborgs. OIDC_CLAIMS' value is JSON {iss, sub, aud}
 * (what core sends), checked here and handed on as compact JSON.
 */
export function accountLookup(filterType: string, filterValue: string, withVerificationToken: boolean): AccountLookup {
  if (filterType === "EMAIL" || filterType === "PHONE_NUMBER") {
    return {
      query: withVerificationToken ? "list_verified_suborgs" : "list_suborgs",
      filterType,
      filterValue,
      contact: { type: filterType === "EMAIL" ? "OTP_TYPE_EMAIL" : "OTP_TYPE_SMS", value: filterValue },
    };
  }
  if (filterType === "OIDC_CLAIMS") return { query: "list_suborgs", filterType, filterValue: JSON.stringify(oidcClaims(filterValue)) };
  const mapped = SIMPLE.get(filterType);
  if (mapped === undefined) {
    throw invalid(`filterType ${JSON.stringify(filterType.slice(0, 64))} is not a known filter type`, [
      {
        field: "filterType",
        description: "one of EMAIL, PHONE_NUMBER, OIDC_TOKEN, OIDC_CLAIMS, PUBLIC_KEY, CREDENTIAL_ID, NAME, USERNAME",
      },
    ]);
  }
  return { query: "list_suborgs", filterType: mapped, filterValue };
}

/** The same contact, as the API compares it: emails in any case, phone numbers as written. */
export function sameContact(type: "OTP_TYPE_EMAIL" | "OTP_TYPE_SMS", a: string, b: string): boolean {
  return type === "OTP_TYPE_EMAIL" ? a.trim().toLowerCase() === b.trim().toLowerCase() : a.trim() === b.trim();
}

/**
 * A name the browser chose, unless it is the user's own email or phone number (then undefined:
 * the default name is used), so a NAME or USERNAME look-up never finds by contact what
 * verificationTokenRequiredForGetAccountPii guards (docs/auth-proxy-service.md §2.2).
 */
export function nameOtherThanContact(name: unknown, email: unknown, phone: unknown): string | undefined {
  if (typeof name !== "string") return undefined;
  if (typeof email === "string" && sameContact("OTP_TYPE_EMAIL", name, email)) return undefined;
  if (typeof phone === "string" && sameContact("OTP_TYPE_SMS", name, phone)) return undefined;
  return name;
}
