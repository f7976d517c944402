import { it } from "node:test";
import assert from "node:assert/strict";
import { onceRetrying } from "../../src/cache/once.ts";

it("onceRetrying: one making shared by every caller; a failure is not kept, the next call makes again", async () => {
  let calls = 0;
  const get = onceRetrying(async () => {
    calls++;
    if (calls === 1) throw new Error("first fails");
    return calls;
  });
  await assert.rejects(get(), /first fails/);
  const [a, b] = await Promise.all([get(), get()]);
  assert.equal(a, 2);
  assert.equal(b, 2);
  assert.equal(await get(), 2);
  assert.equal(calls, 2);
});
