// The README's SDK coverage table and docs/api.md §4 are written by `npm run docs:coverage`
// (scripts/sdk-coverage.ts) from @turnkey/http's paths and the registries: a registered or
// removed operation without a rerun fails here.
import { it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { API_DOC, README, coverage, sdkPaths, withCoverage } from "../../scripts/sdk-coverage.ts";

it("the README table and docs/api.md §4 are what `npm run docs:coverage` writes", () => {
  const readme = readFileSync(README, "utf8");
  const api = readFileSync(API_DOC, "utf8");
  const expected = withCoverage(readme, api);
  assert.ok(expected.readme === readme, "README.md's SDK coverage table is stale: run npm run docs:coverage");
  assert.ok(expected.api === api, "docs/api.md §4 (SDK paths not served) is stale: run npm run docs:coverage");
});

it("counts every SDK path once, served or not, and knows paths the registries serve", () => {
  const sdk = sdkPaths();
  assert.ok(sdk.submit.includes("create_users") && sdk.query.includes("whoami"), "the SDK's own paths are read");
  const c = coverage(sdk);
  assert.equal(c.submit.served.length + c.submit.unserved.length, sdk.submit.length);
  assert.equal(c.query.served.length + c.query.unserved.length, sdk.query.length);
  assert.ok(c.submit.served.includes("create_users") && c.query.served.includes("whoami"));
  assert.ok(!c.submit.unserved.includes("approve_activity"), "votes are served submit paths");
  // An SDK path nothing registers is listed as not served.
  const more = coverage({ ...sdk, query: [...sdk.query, "zz_not_an_operation"] });
  assert.ok(more.query.unserved.includes("zz_not_an_operation"));
});

it("a document without its markers is refused, naming them", () => {
  assert.throws(() => withCoverage("no markers", readFileSync(API_DOC, "utf8")), /README\.md: the markers/);
});
