import { it } from "node:test";
import assert from "node:assert/strict";
import { MAX_DRY_RUNS_PER_NODE, takeDryRunSlot } from "../../src/policy-dryrun/slots.ts";
import { ApiError } from "../../src/errors.ts";

const is429 = (err: unknown) => err instanceof ApiError && err.code === 8 && err.retryAfterSeconds === 1;

it("dry-run slots: one per organization, a few per node, 429 past either; a slot given back is free again", () => {
  const first = takeDryRunSlot("org-a");
  assert.throws(() => takeDryRunSlot("org-a"), is429);
  const others = Array.from({ length: MAX_DRY_RUNS_PER_NODE - 1 }, (_, i) => takeDryRunSlot(`org-${i}`));
  assert.throws(() => takeDryRunSlot("org-late"), is429);
  first();
  const late = takeDryRunSlot("org-late");
  late();
  others.forEach((release) => release());
  takeDryRunSlot("org-a")();
});
