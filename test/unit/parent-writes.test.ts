// The parent-write seam (docs/request-path.md §5): a parent's credential is refused every activity unless its definition is
// opened to parents (parentMayStamp) — and only the authentication and recovery flows on the
// allow-list (PARENT_STAMPABLE) may be opened: anything else stops the service at startup.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiError } from "../../src/errors.ts";
import { ACTIVITIES, VOTES } from "../../src/activities/registry.ts";
import { checkParentStampable, isParentStampable, refuseParentWrite } from "../../src/pipeline/parent-writes.ts";
import type { Principal } from "../../src/auth/principal.ts";

const auth = (fromAncestor: boolean) =>
  ({
    fromAncestor,
    actor: { userId: "u", userName: "root", organizationId: "parent-org", organizationName: "Parent" },
    organization: { id: fromAncestor ? "child-org" : "parent-org" },
  }) as unknown as Principal;

const refused = (type: string) => (e: unknown) =>
  e instanceof ApiError && e.httpStatus === 403 && e.code === 7 && e.category === "REQUEST_NOT_AUTHORIZED" && e.message.includes(type);

describe("parent writes", () => {
  it("the allow-list: the OTP, login, legacy email/OTP auth and email recovery types, every version — nothing else", () => {
    for (const t of [
      "ACTIVITY_TYPE_INIT_OTP",
      "ACTIVITY_TYPE_INIT_OTP_V2",
      "ACTIVITY_TYPE_INIT_OTP_V3",
      "ACTIVITY_TYPE_VERIFY_OTP",
      "ACTIVITY_TYPE_VERIFY_OTP_V2",
      "ACTIVITY_TYPE_OTP_LOGIN",
      "ACTIVITY_TYPE_OTP_LOGIN_V2",
      "ACTIVITY_TYPE_STAMP_LOGIN",
      "ACTIVITY_TYPE_OAUTH_LOGIN",
      "ACTIVITY_TYPE_EMAIL_AUTH",
      "ACTIVITY_TYPE_EMAIL_AUTH_V3",
      "ACTIVITY_TYPE_INIT_OTP_AUTH_V3",
      "ACTIVITY_TYPE_OTP_AUTH",
      "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY",
    ]) {
      assert.ok(isParentStampable(t), t);
    }
    for (const t of [
      "ACTIVITY_TYPE_CREATE_USERS_V4",
      "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
      "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM",
      "ACTIVITY_TYPE_APPROVE_ACTIVITY",
      "ACTIVITY_TYPE_RECOVER_USER",
      "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
      "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE",
      "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
      // Anchored: a prefix or suffix does not make a type stampable.
      "ACTIVITY_TYPE_STAMP_LOGIN_V2",
      "ACTIVITY_TYPE_INIT_OTP_V3_EXTRA",
      "X_ACTIVITY_TYPE_OTP_LOGIN",
      "ACTIVITY_TYPE_OTP_LOGINS",
      "",
    ]) {
      assert.equal(isParentStampable(t), false, t);
    }
  });

  it("the startup check refuses a definition that opens any other type to parents, naming it", () => {
    assert.throws(
      () =>
        checkParentStampable([
          { type: "ACTIVITY_TYPE_STAMP_LOGIN", parentMayStamp: true },
          { type: "ACTIVITY_TYPE_CREATE_USERS_V4", parentMayStamp: true },
        ]),
      /parentMayStamp is set on ACTIVITY_TYPE_CREATE_USERS_V4: only the authentication and recovery flows/,
    );
    checkParentStampable([{ type: "ACTIVITY_TYPE_CREATE_USERS_V4" }, { type: "ACTIVITY_TYPE_CREATE_USERS_V4", parentMayStamp: false }]);
    checkParentStampable([
      { type: "ACTIVITY_TYPE_INIT_OTP_V3", parentMayStamp: true },
      { type: "ACTIVITY_TYPE_STAMP_LOGIN", parentMayStamp: true },
    ]);
  });

  it("the registry passes it: exactly the registered allow-listed types that open themselves are open", () => {
    const routes = [...ACTIVITIES, ...VOTES];
    checkParentStampable(routes);
    const open = routes.filter((d) => d.parentMayStamp).map((d) => d.type);
    assert.ok(open.includes("ACTIVITY_TYPE_STAMP_LOGIN"), open.join());
    for (const t of open) assert.ok(isParentStampable(t), t);
  });

  it("refuses a parent credential with 403 REQUEST_NOT_AUTHORIZED for every route not open to parents", () => {
    for (const route of [...ACTIVITIES, ...VOTES]) {
      if (route.parentMayStamp) {
        refuseParentWrite(route, auth(true));
      } else {
        assert.throws(() => refuseParentWrite(route, auth(true)), refused(route.type));
      }
      refuseParentWrite(route, auth(false)); // the target organization's own credential
    }
  });

  it("parentMayStamp on a type off the allow-list does not open it, even past the startup check", () => {
    for (const route of [...ACTIVITIES, ...VOTES].filter((r) => !isParentStampable(r.type))) {
      assert.throws(() => refuseParentWrite({ ...route, parentMayStamp: true }, auth(true)), refused(route.type));
    }
  });
});
