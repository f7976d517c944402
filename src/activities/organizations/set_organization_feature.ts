// set_organization_feature / remove_organization_feature (docs/organizations.md §8): the
// organization's own feature switches, decided by its root quorum alone (docs/policy-language.md §4.9:
// `rootOnly`, checked before any policy). A parent cannot set them in a sub-organization
// (pipeline/parent-writes.ts). Both answer with the organization's features that are on.
import { Type } from "@sinclair/typebox";
import { FeatureSchema, featuresOf, writeFeature } from "../../store/organization-features.ts";
import { defineActivity } from "../define.ts";
import { featureValue, MAX_FEATURE_VALUE, servedFeature } from "./feature-values.ts";

const FeatureName = Type.String({ minLength: 1, maxLength: 64, errorMessage: "must be a FEATURE_NAME_* value" });
const Result = Type.Object({ features: Type.Array(FeatureSchema) });

export const setOrganizationFeature = defineActivity({
  type: "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
  resource: "ORGANIZATION",
  action: "UPDATE",
  kind: "SET_ORGANIZATION_FEATURE",
  summary: "Switch a feature of the organization on, with its value (root quorum only).",
  params: Type.Object({
    name: FeatureName,
    // Required in the SDK type, described there as optional: absent reads as "".
    value: Type.Optional(
      Type.String({ maxLength: MAX_FEATURE_VALUE, errorMessage: `must be a string of at most ${MAX_FEATURE_VALUE} characters` }),
    ),
  }),
  returns: Result,
  rootOnly: true,
  check(p) {
    featureValue(servedFeature(p.name), p.value ?? "");
  },
  async execute({ tx, organization, now }, p) {
    const name = servedFeature(p.name);
    await writeFeature(tx, organization.id, name, { enabled: true, value: featureValue(name, p.value ?? "") }, now);
    return { features: await featuresOf(tx, organization.id) };
  },
});

export const removeOrganizationFeature = defineActivity({
  type: "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE",
  resource: "ORGANIZATION",
  action: "UPDATE",
  kind: "REMOVE_ORGANIZATION_FEATURE",
  summary: "Switch a feature of the organization off (root quorum only).",
  params: Type.Object({ name: FeatureName }),
  returns: Result,
  rootOnly: true,
  check(p) {
    servedFeature(p.name);
  },
  async execute({ tx, organization, now }, p) {
    await writeFeature(tx, organization.id, servedFeature(p.name), { enabled: false, value: "" }, now);
    return { features: await featuresOf(tx, organization.id) };
  },
});
