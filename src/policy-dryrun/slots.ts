// How many dry runs a node runs at once (docs/policy-dry-run.md §4.3). Each may spend up to its
// time budget of CPU, yielding the event loop as it goes: the yielding keeps other requests
// answered, but not the CPU free. Without a cap, one organization sending dry runs in parallel
// would hold the node's cores for all of them. One at a time per organization, a few per node;
// past either, 429 with a Retry-After. [our choice]
import { exhausted } from "../errors.ts";

export const MAX_DRY_RUNS_PER_NODE = 4;

const running = new Set<string>();

/** Takes the organization's slot; the returned function gives it back. Throws 429 when none is free. */
export function takeDryRunSlot(organizationId: string): () => void {
  if (running.has(organizationId)) throw exhausted("a dry run of this organization is already running; retry when it has answered", 1000);
  if (running.size >= MAX_DRY_RUNS_PER_NODE)
    throw exhausted(`at most ${MAX_DRY_RUNS_PER_NODE} dry runs run at once on this node; retry shortly`, 1000);
  running.add(organizationId);
  return () => {
    running.delete(organizationId);
  };
}
