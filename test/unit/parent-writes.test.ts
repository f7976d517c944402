// The §6.7 seam: a parent's credential is refused every activity unless its definition is
// opened to parents (parentMayStamp, for the authentication and recovery flows to come).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { ACTIVITIES, VOTES } from "../../src/activities/registry.ts";
import { refuseParentWrite } from "../../src/pipeline/parent-writes.ts";
import type { Principal } from "../../src/auth/principal.ts";

const auth = (fromAncestor: boolean) =>
  ({
    fromAncestor,
    actor: { userId: "u", userName: "root", organizationId: "parent-org", organizationName: "Parent" },
    organization: { id: fromAncestor ? "child-org" : "parent-org" },
  }) as unknown as Principal;

describe("parent writes", () => {
  it("no registered activity or vote is open to parents yet", () => {
    assert.deepEqual([...ACTIVITIES, ...VOTES].filter((d) => d.parentMayStamp).map((d) => d.type), []);
  });

  it("refuses a parent credential with 403 REQUEST_NOT_AUTHORIZED, for every route", () => {
    for (const route of [...ACTIVITIES, ...VOTES]) {
      assert.throws(
        () => refuseParentWrite(route, auth(true)),
        (e: unknown) =>
          e instanceof ApiError && e.httpStatus === 403 && e.code === 7 && e.category === "REQUEST_NOT_AUTHORIZED" && e.message.includes(route.type),
      );
      refuseParentWrite(route, auth(false)); // the target organization's own credential
    }
  });

  it("lets a parent credential through where the definition opens the route to parents", () => {
    for (const route of [...ACTIVITIES, ...VOTES]) refuseParentWrite({ ...route, parentMayStamp: true }, auth(true));
  });
});
