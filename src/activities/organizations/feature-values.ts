// What set_organization_feature accepts for each feature (docs/organizations.md §8.1): the
// name among those this service serves, and a value of the feature's format.
import { invalid } from "../../errors.ts";
import { FEATURE_NAMES, isFeatureName, type FeatureName } from "../../store/organization-features.ts";

/** FEATURE_NAME_* values of the SDK's v1FeatureName this service does not serve. */
const NOT_SERVED = new Set(["FEATURE_NAME_SOLANA_RENT_PREFUND_ENABLED", "FEATURE_NAME_SWAP_CONFIG", "FEATURE_NAME_EARN_CONFIG"]);

export const MAX_FEATURE_VALUE = 2048;
/** At most this many origins in a WEBAUTHN_ORIGINS value (our choice). */
export const MAX_WEBAUTHN_ORIGINS = 10;

/** The name as a served feature, or a 400 naming the field. */
export function servedFeature(name: string): FeatureName {
  if (isFeatureName(name)) return name;
  const why = NOT_SERVED.has(name)
    ? `${name} is not served by this service; served features: ${FEATURE_NAMES.join(", ")}`
    : `unknown feature name ${JSON.stringify(name.slice(0, 64))}; served features: ${FEATURE_NAMES.join(", ")}`;
  return refuse("parameters.name", why);
}

/** The value to store for `name`, or a 400 naming the field. */
export function featureValue(name: FeatureName, value: string): string {
  const field = "parameters.value";
  switch (name) {
    case "FEATURE_NAME_WEBAUTHN_ORIGINS":
      return webauthnOrigins(value).join(",");
    case "FEATURE_NAME_WEBHOOK":
      if (!isWebUrl(value, false)) refuse(field, "FEATURE_NAME_WEBHOOK takes an https URL (http only for localhost)");
      return value;
    default:
      // On/off features: the row's presence is the setting.
      if (value !== "") refuse(field, `${name} is an on/off feature: its value must be empty`);
      return "";
  }
}

/** A WEBAUTHN_ORIGINS value: comma-separated origins (scheme://host[:port], https or http://localhost). */
export function webauthnOrigins(value: string): string[] {
  const field = "parameters.value";
  const origins = value.split(",").map((o) => o.trim());
  if (value.trim() === "" || origins.length > MAX_WEBAUTHN_ORIGINS) {
    refuse(field, `FEATURE_NAME_WEBAUTHN_ORIGINS takes 1 to ${MAX_WEBAUTHN_ORIGINS} comma-separated origins, e.g. https://app.example.com`);
  }
  for (const o of origins) {
    if (!isWebUrl(o, true))
      refuse(
        field,
        `${JSON.stringify(o.slice(0, 200))} is not an origin (scheme://host[:port], https or http://localhost, nothing after the host)`,
      );
  }
  return origins;
}

/** An http(s) URL; `originOnly`: exactly an origin, as browsers write it in clientDataJSON. */
function isWebUrl(s: string, originOnly: boolean): boolean {
  if (s.length === 0 || s.length > MAX_FEATURE_VALUE) return false;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  if (u.username || u.password) return false;
  const local = u.hostname === "localhost" || u.hostname === "127.0.0.1" || u.hostname === "[::1]";
  if (u.protocol !== "https:" && !(u.protocol === "http:" && local)) return false;
  return originOnly ? u.origin === s : true;
}

function refuse(field: string, description: string): never {
  throw invalid(`${field}: ${description}`, [{ field, description }]);
}
