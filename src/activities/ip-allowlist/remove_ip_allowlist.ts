// remove_ip_allowlist (docs/network.md §2.1): no publicKey → the organization's list and its rules
// go, and every address may use the organization again (key lists stay stored, inert until
// an organization list is enabled again); with publicKey → that key's list goes and the key
// falls back to the organization's list. Removing a list that does not exist succeeds.
//
// Removing a key's list can lock its caller out (the organization's rules then apply): the
// same safety check as set_ip_allowlist refuses that with 400.
import { Type, type Static } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { lockOrganization } from "../../store/locks.ts";
import { deleteAllowlist, ORGANIZATION_LIST, readAllowlists } from "../../store/ip-allowlists.ts";
import { parseAddress } from "../../network/address.ts";
import { admits, compileAllowlists } from "../../network/allowlist.ts";
import { defineActivity, type ExecuteContext } from "../define.ts";
import { PublicKeyParam, requireApiKey, requireRootOrganization } from "./rules.ts";

const Params = Type.Object({ publicKey: PublicKeyParam });

async function execute(ctx: ExecuteContext, p: Static<typeof Params>) {
  const { tx, organization, now } = ctx;
  await requireRootOrganization(tx, organization.id, ctx.chains);
  await lockOrganization(tx, organization.id);
  const publicKey = p.publicKey ? await requireApiKey(tx, organization.id, p.publicKey) : ORGANIZATION_LIST;
  await deleteAllowlist(tx, organization.id, publicKey, now);
  if (publicKey !== ORGANIZATION_LIST) {
    const caller = ctx.caller;
    if (caller && ctx.actor.organizationId === organization.id) {
      const lists = compileAllowlists(await readAllowlists(tx, organization.id));
      const address = caller.address !== undefined ? parseAddress(caller.address) : undefined;
      if (!admits(lists, caller.publicKey, address)) {
        throw invalid(
          `this change would refuse the request making it: IP address ${caller.address ?? "(unknown)"} is not allowed by the organization's list the key would fall back to`,
          [{ field: "parameters.publicKey", description: "removing this list would lock the caller out" }],
        );
      }
    }
  }
  return {};
}

export const removeIpAllowlist = defineActivity({
  type: "ACTIVITY_TYPE_REMOVE_IP_ALLOWLIST",
  // docs/policy-language.md §4.7 (undocumented upstream): CONFIG/DELETE, no activity.params.
  resource: "CONFIG",
  action: "DELETE",
  kind: "REMOVE_IP_ALLOWLIST",
  summary:
    "Remove the IP allowlist of the organization (all addresses allowed) or of one of its API keys (falls back to the organization's).",
  params: Params,
  returns: Type.Object({}),
  execute,
});
