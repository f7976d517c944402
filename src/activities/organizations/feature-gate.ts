// Refusing a flow whose feature is switched off (docs/organizations.md §8.2): the flows call
// requireFeature with the organization they run in.
import { precondition } from "../../errors.ts";
import { organizationChain, type ChainCache } from "../../store/organizations.ts";
import { featureOnAlongChain, type FeatureName } from "../../store/organization-features.ts";
import type { Executor, OtpType } from "../../store/schema.ts";

/** The feature that switches each OTP channel (upstream doc: FEATURE_NAME_OTP_EMAIL_AUTH, FEATURE_NAME_SMS_AUTH). */
export const OTP_FEATURE: Readonly<Record<OtpType, FeatureName>> = {
  OTP_TYPE_EMAIL: "FEATURE_NAME_OTP_EMAIL_AUTH",
  OTP_TYPE_SMS: "FEATURE_NAME_SMS_AUTH",
};

/**
 * Throws FAILED_PRECONDITION (400) when `name` is off for a flow in the organization: off in
 * it or in any of its ancestors.
 */
export async function requireFeature(
  ctx: { tx: Executor; organization: { id: string }; chains: ChainCache },
  name: FeatureName,
  flow: string,
): Promise<void> {
  const chain = await organizationChain(ctx.tx, ctx.organization.id, ctx.chains);
  if (await featureOnAlongChain(ctx.tx, chain, name)) return;
  throw precondition(
    `${flow} is disabled for organization ${ctx.organization.id}: its feature ${name} is switched off there or in a parent organization`,
  );
}
