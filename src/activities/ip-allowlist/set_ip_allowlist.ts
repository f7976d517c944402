// set_ip_allowlist (docs/network.md §2.1): replaces the organization's list (no publicKey) or one
// API key's. Rules are normalised, deduplicated (first label kept), at most 10 per family.
// Absent `rules` keeps the current rules (so `enabled` alone can be switched); present, even
// empty, replaces them all. Absent `enabled` / `onEvaluationError` keep their values (new
// lists: disabled, DENY).
//
// Safety divergence from the hosted service: a change that would refuse the very request
// making it — enabling with no rule that admits the caller, or a key list that excludes it —
// is refused with 400 instead of locking the caller out.
import { Type, type Static } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { lockOrganization } from "../../store/locks.ts";
import { ORGANIZATION_LIST, readAllowlist, readAllowlists, writeAllowlist, type OnEvaluationError } from "../../store/ip-allowlists.ts";
import { parseAddress } from "../../network/address.ts";
import { admits, compileAllowlists } from "../../network/allowlist.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { normaliseRules, PublicKeyParam, requireApiKey, requireRootOrganization, RulesParam } from "./rules.ts";

const Params = Type.Object({
  publicKey: PublicKeyParam,
  enabled: Type.Optional(Type.Boolean({ errorMessage: "must be true or false" })),
  rules: RulesParam,
  onEvaluationError: Type.Optional(Type.Union([Type.Literal("ALLOW"), Type.Literal("DENY")], { errorMessage: "must be ALLOW or DENY" })),
});

function check(p: Static<typeof Params>): void {
  if (p.publicKey && p.enabled !== undefined) {
    throw invalid("enabled applies to the organization's list only; omit it for an API key's list", [
      { field: "parameters.enabled", description: "only for the organization-level list (no publicKey)" },
    ]);
  }
  if (p.publicKey && p.onEvaluationError !== undefined) {
    throw invalid("onEvaluationError applies to the organization's list only; omit it for an API key's list", [
      { field: "parameters.onEvaluationError", description: "only for the organization-level list (no publicKey)" },
    ]);
  }
  if (p.rules) normaliseRules(p.rules);
}

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  await requireRootOrganization(tx, organization.id, ctx.chains);
  await lockOrganization(tx, organization.id);
  const publicKey = p.publicKey ? await requireApiKey(tx, organization.id, p.publicKey) : ORGANIZATION_LIST;
  const current = await readAllowlist(tx, organization.id, publicKey);
  const rules = p.rules ? normaliseRules(p.rules) : undefined;
  await writeAllowlist(
    tx,
    organization.id,
    {
      publicKey,
      enabled: publicKey === ORGANIZATION_LIST ? (p.enabled ?? current?.enabled ?? false) : true,
      onEvaluationError: (p.onEvaluationError ?? current?.onEvaluationError ?? "DENY") as OnEvaluationError,
      rules,
    },
    now,
  );
  await refuseSelfLockout(ctx);
  return {};
}

/** Would the request making this change still be admitted once it is made? */
async function refuseSelfLockout(ctx: ExecuteContext): Promise<void> {
  const caller = ctx.caller;
  // Executed later, on another user's approval: the submitter's request is not the one at hand.
  if (!caller || ctx.actor.organizationId !== ctx.organization.id) return;
  const lists = compileAllowlists(await readAllowlists(ctx.tx, ctx.organization.id));
  const address = caller.address !== undefined ? parseAddress(caller.address) : undefined;
  if (admits(lists, caller.publicKey, address)) return;
  throw invalid(
    `this change would refuse the request making it: IP address ${caller.address ?? "(unknown)"} would not be allowed; ` +
      "add a rule that covers it first (Sigil refuses self-lockout, unlike the hosted service)",
    [{ field: "parameters.rules", description: `no rule would allow ${caller.address ?? "the caller's address"}` }],
  );
}

export const setIpAllowlist = defineActivity({
  type: "ACTIVITY_TYPE_SET_IP_ALLOWLIST",
  // docs/policy-language.md §4.7 (undocumented upstream): CONFIG/UPDATE, no activity.params.
  resource: "CONFIG",
  action: "UPDATE",
  kind: "SET_IP_ALLOWLIST",
  summary: "Set the IP allowlist of the organization or of one of its API keys (replaces the rules).",
  params: Params,
  returns: Type.Object({}),
  check,
  execute,
});
