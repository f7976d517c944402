// Sub-organizations for the organization lifecycle tests (docs/organizations.md §7): made by a
// parent through create_sub_organization, with one root user holding an API key the test keeps.
import { createSubOrganizationV8 } from "../../src/activities/organizations/create_sub_organization.ts";
import { generateP256KeyPair } from "../../src/crypto/keygen.ts";
import { completed, type Creds, type Harness, type Json } from "./inproc.ts";

export interface SubOrganization extends Creds {
  /** The parent's credential that made it. */
  parent: Creds;
}

/** A sub-organization of `parent` (root by default) whose only root user holds a fresh API key. */
export async function subOrganization(h: Harness, over: Json = {}, parent: Creds = h.root): Promise<SubOrganization> {
  const key = generateP256KeyPair();
  const res = await h.submit(
    "create_sub_organization",
    "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8",
    {
      subOrganizationName: `sub-${key.publicKey.slice(2, 10)}`,
      rootUsers: [
        {
          userName: "owner",
          apiKeys: [{ apiKeyName: "k", publicKey: key.publicKey, curveType: "API_KEY_CURVE_P256" }],
          authenticators: [],
          oauthProviders: [],
        },
      ],
      rootQuorumThreshold: 1,
      ...over,
    },
    { as: parent },
  );
  const r = completed(res, createSubOrganizationV8);
  return { organizationId: r.subOrganizationId, userId: r.rootUserIds![0]!, key, parent };
}
