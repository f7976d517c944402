// get_ip_allowlist (docs/network.md §2.1): the organization's list, or one API key's. A list that
// does not exist (never set, removed, a sub-organization) is answered with empty rules, not 404.
import { Type } from "@sinclair/typebox";
import { HexPublicKey, OrganizationId } from "../schemas/common.ts";
import { ORGANIZATION_LIST, readAllowlist } from "../store/ip-allowlists.ts";
import { defineQuery } from "./define.ts";

const Rule = Type.Object({ cidr: Type.String(), label: Type.String(), createdAt: Type.String() });
const Allowlist = Type.Object({
  organizationId: Type.String(),
  rules: Type.Array(Rule),
  publicKey: Type.Optional(Type.String()),
  enabled: Type.Optional(Type.Boolean()),
  onEvaluationError: Type.Optional(Type.String()),
});

export const getIpAllowlist = defineQuery({
  op: "get_ip_allowlist",
  summary: "Get the IP allowlist of the organization, or of one of its API keys.",
  request: Type.Object({
    organizationId: OrganizationId,
    publicKey: Type.Optional(
      Type.Union([HexPublicKey, Type.Null()], {
        errorMessage: "must be the hex public key of an API key, or null for the organization's list",
      }),
    ),
  }),
  response: Type.Object({ allowlist: Allowlist }),
  async run({ db, organization }, req) {
    const publicKey = req.publicKey ? req.publicKey.toLowerCase() : ORGANIZATION_LIST;
    const list = await readAllowlist(db, organization.id, publicKey);
    const rules = (list?.rules ?? []).map((r) => ({ cidr: r.cidr, label: r.label, createdAt: String(r.createdAt) }));
    if (publicKey !== ORGANIZATION_LIST) return { allowlist: { organizationId: organization.id, rules, publicKey: req.publicKey! } };
    return {
      allowlist: {
        organizationId: organization.id,
        rules,
        enabled: list?.enabled ?? false,
        onEvaluationError: list?.onEvaluationError ?? "DENY",
      },
    };
  },
});
