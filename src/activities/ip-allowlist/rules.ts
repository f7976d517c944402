// What set_ip_allowlist and remove_ip_allowlist share: the parameter schemas, rule
// normalisation (docs/network.md §2.2), and the checks on where a list may live.
import { Type } from "@sinclair/typebox";
import { invalid, notFound, precondition } from "../../errors.ts";
import { HexPublicKey, maxItems } from "../../schemas/common.ts";
import { parseRange, type Family } from "../../network/address.ts";
import { MAX_RULES_PER_FAMILY, PREFIX_BOUNDS } from "../../network/allowlist.ts";
import type { Executor } from "../../store/schema.ts";
import type { ChainCache } from "../../store/organizations.ts";
import { organizationChain } from "../../store/organizations.ts";

/** Raw rules accepted before duplicates are dropped (20 distinct may remain). */
export const MAX_RULES_SUBMITTED = 40;
export const MAX_LABEL_LENGTH = 256;

export const PublicKeyParam = Type.Optional(
  Type.Union([HexPublicKey, Type.Null()], {
    errorMessage: "must be the hex public key of an API key of the organization, or null for the organization's list",
  }),
);

export const RuleParam = Type.Object({
  cidr: Type.String({ minLength: 1, maxLength: 64, errorMessage: "must be an IPv4 or IPv6 address or CIDR range (at most 64 characters)" }),
  label: Type.Optional(Type.String({ maxLength: MAX_LABEL_LENGTH, errorMessage: `must be at most ${MAX_LABEL_LENGTH} characters` })),
});

export const RulesParam = Type.Optional(maxItems(RuleParam, "rules", MAX_RULES_SUBMITTED));

export interface NormalisedRule {
  cidr: string;
  label: string;
}

/** Normalises, drops duplicates (the first occurrence and its label are kept) and counts per family. */
export function normaliseRules(rules: readonly { cidr: string; label?: string }[]): NormalisedRule[] {
  const seen = new Set<string>();
  const out: NormalisedRule[] = [];
  const count = new Map<Family, number>([
    [4, 0],
    [6, 0],
  ]);
  rules.forEach((rule, i) => {
    const range = parseRange(rule.cidr, PREFIX_BOUNDS);
    if (typeof range === "string") {
      throw invalid(`rules[${i}]: ${range}`, [{ field: `parameters.rules[${i}].cidr`, description: range }]);
    }
    if (seen.has(range.cidr)) return;
    seen.add(range.cidr);
    const n = count.get(range.family)! + 1;
    count.set(range.family, n);
    if (n > MAX_RULES_PER_FAMILY) {
      const why = `at most ${MAX_RULES_PER_FAMILY} distinct IPv${range.family} rules per list`;
      throw invalid(`rules[${i}]: ${why}`, [{ field: `parameters.rules[${i}].cidr`, description: why }]);
    }
    out.push({ cidr: range.cidr, label: rule.label ?? "" });
  });
  return out;
}

/** Lists live on root organizations only: sub-organizations are never evaluated (docs/network.md §2.4). */
export async function requireRootOrganization(db: Executor, organizationId: string, chains: ChainCache): Promise<void> {
  const chain = await organizationChain(db, organizationId, chains);
  if (chain.length > 1) {
    throw precondition(`IP allowlists can only be configured on a root organization; ${organizationId} is a sub-organization`);
  }
}

/** The key a list is stored under: lower-case hex of an API key of the organization. */
export async function requireApiKey(db: Executor, organizationId: string, publicKey: string): Promise<string> {
  const normalized = publicKey.toLowerCase();
  const key = await db
    .selectFrom("api_keys")
    .select("id")
    .where("organization_id", "=", organizationId)
    .where("public_key_normalized", "=", normalized)
    .executeTakeFirst();
  if (!key) throw notFound(`publicKey: no API key ${publicKey} in organization ${organizationId}`);
  return normalized;
}
