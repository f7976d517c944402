// Organization features (docs/organizations.md §8): what set_organization_feature and
// remove_organization_feature chose, the create_sub_organization `disable*` settings, and
// each feature's default, read as one effective state.
import { Type } from "@sinclair/typebox";
import type { Executor } from "./schema.ts";

/** The FEATURE_NAME_* values this service serves (SDK type v1FeatureName, a subset). */
export const FEATURE_NAMES = [
  "FEATURE_NAME_EMAIL_AUTH",
  "FEATURE_NAME_OTP_EMAIL_AUTH",
  "FEATURE_NAME_SMS_AUTH",
  "FEATURE_NAME_EMAIL_RECOVERY",
  "FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY",
  "FEATURE_NAME_WEBAUTHN_ORIGINS",
  "FEATURE_NAME_WEBHOOK",
  "FEATURE_NAME_AUTH_PROXY",
] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];

export function isFeatureName(name: string): name is FeatureName {
  return (FEATURE_NAMES as readonly string[]).includes(name);
}

/**
 * On when never set or removed (docs/organizations.md §8.1). The others are off until set:
 * WEBAUTHN_ORIGINS and WEBHOOK carry a value and mean nothing without one.
 */
const ON_BY_DEFAULT: ReadonlySet<FeatureName> = new Set([
  "FEATURE_NAME_EMAIL_AUTH",
  "FEATURE_NAME_OTP_EMAIL_AUTH",
  "FEATURE_NAME_SMS_AUTH",
  "FEATURE_NAME_EMAIL_RECOVERY",
  "FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY",
  "FEATURE_NAME_AUTH_PROXY",
]);

/** create_sub_organization's settings that switch a default-on feature off at creation. */
const SETTING_OF: ReadonlyMap<string, FeatureName> = new Map([
  ["disableEmailAuth", "FEATURE_NAME_EMAIL_AUTH"],
  ["disableOtpEmailAuth", "FEATURE_NAME_OTP_EMAIL_AUTH"],
  ["disableSmsAuth", "FEATURE_NAME_SMS_AUTH"],
  ["disableEmailRecovery", "FEATURE_NAME_EMAIL_RECOVERY"],
]);

/** SDK type v1Feature, as the features of an organization are answered. */
export const FeatureSchema = Type.Object({ name: Type.Union(FEATURE_NAMES.map((n) => Type.Literal(n))), value: Type.String() });

/** A feature that is on, as the SDK's v1Feature gives it. */
export interface Feature {
  name: FeatureName;
  value: string;
}

/** One organization's features that are on: defaults, minus what it removed or its settings disable, plus what it set. Ordered as FEATURE_NAMES. */
export async function featuresOf(db: Executor, organizationId: string): Promise<Feature[]> {
  return (await featuresOfMany(db, [organizationId])).get(organizationId) ?? [];
}

/** featuresOf for several organizations in two statements. */
export async function featuresOfMany(db: Executor, organizationIds: readonly string[]): Promise<Map<string, Feature[]>> {
  const out = new Map<string, Feature[]>();
  if (organizationIds.length === 0) return out;
  const ids = [...organizationIds];
  // One after the other: `db` may be an activity's transaction (one connection).
  const orgs = await db.selectFrom("organizations").select(["id", "settings"]).where("id", "in", ids).execute();
  const rows = await db
    .selectFrom("organization_features")
    .select(["organization_id", "name", "enabled", "value"])
    .where("organization_id", "in", ids)
    .execute();
  for (const org of orgs) {
    const explicit = new Map<string, { enabled: boolean; value: string }>();
    for (const r of rows) if (r.organization_id === org.id) explicit.set(r.name, { enabled: Number(r.enabled) === 1, value: r.value });
    const disabled = disabledBySettings(org.settings);
    const features: Feature[] = [];
    for (const name of FEATURE_NAMES) {
      const chosen = explicit.get(name);
      if (chosen) {
        if (chosen.enabled) features.push({ name, value: chosen.value });
      } else if (ON_BY_DEFAULT.has(name) && !disabled.has(name)) {
        features.push({ name, value: "" });
      }
    }
    out.set(org.id, features);
  }
  return out;
}

function disabledBySettings(settings: string): Set<FeatureName> {
  const off = new Set<FeatureName>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(settings);
  } catch {
    return off;
  }
  if (typeof parsed !== "object" || parsed === null) return off;
  for (const [setting, name] of SETTING_OF)
    if (Object.hasOwn(parsed, setting) && (parsed as Record<string, unknown>)[setting] === true) off.add(name);
  return off;
}

/**
 * Whether an on/off feature is on for a flow running in the organization whose chain (itself
 * first, then its ancestors) is given: off as soon as one of them has it off — a parent
 * switching a login method off switches it off for every sub-organization below it, and a
 * sub-organization may switch it off for itself (docs/organizations.md §8.2).
 */
export async function featureOnAlongChain(db: Executor, chain: readonly string[], name: FeatureName): Promise<boolean> {
  if (chain.length === 0) return false;
  const byOrg = await featuresOfMany(db, chain);
  return chain.every((id) => (byOrg.get(id) ?? []).some((f) => f.name === name));
}

/**
 * The values a valued feature was set to along a chain (the organization first, then its
 * ancestors), one per organization that set it; empty: set nowhere.
 */
export async function featureValuesAlongChain(db: Executor, chain: readonly string[], name: FeatureName): Promise<string[]> {
  if (chain.length === 0) return [];
  const rows = await db
    .selectFrom("organization_features")
    .select("value")
    .where("organization_id", "in", [...chain])
    .where("name", "=", name)
    .where("enabled", "=", 1)
    .execute();
  return rows.map((r) => r.value);
}

/** Records the organization's choice for a feature (set: on with its value; removed: off). */
export async function writeFeature(
  db: Executor,
  organizationId: string,
  name: FeatureName,
  state: { enabled: boolean; value: string },
  now: number,
): Promise<void> {
  await db
    .insertInto("organization_features")
    .values({ organization_id: organizationId, name, enabled: state.enabled ? 1 : 0, value: state.value, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.columns(["organization_id", "name"]).doUpdateSet({ enabled: state.enabled ? 1 : 0, value: state.value, updated_at: now }),
    )
    .execute();
}
