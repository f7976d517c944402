import { it } from "node:test";
import assert from "node:assert/strict";
import {
  addUsersWithKeys,
  assertIdempotent,
  completed,
  forbidden,
  notFound,
  invalidRequest,
  perEngine,
  precondition,
  type Harness,
} from "../helpers/inproc.ts";
import { SoftPasskey, TEST_WEBAUTHN, submitWithPasskey } from "../helpers/webauthn.ts";
import { DEFAULT_LOGIN_SETTINGS } from "../../src/logins/settings.ts";
import { createAuthenticatorsV2 } from "../../src/activities/authenticators/create_authenticators.ts";
import { deleteAuthenticators } from "../../src/activities/authenticators/delete_authenticators.ts";

const OP = "delete_authenticators";
const TYPE = "ACTIVITY_TYPE_DELETE_AUTHENTICATORS";
const MISSING = "00000000-0000-4000-8000-000000000000";

async function withPasskeys(h: Harness, userId: string, n: number, as = h.root): Promise<string[]> {
  const regs = Array.from({ length: n }, () => new SoftPasskey().registration());
  const r = await h.submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", { userId, authenticators: regs }, { as });
  return completed(r, createAuthenticatorsV2).authenticatorIds;
}

perEngine(
  "delete_authenticators",
  (h) => {
    it("deletes the named passkeys of a user and keeps the others", async () => {
      const [u] = await addUsersWithKeys(h(), 1);
      const [a, b] = await withPasskeys(h(), u!.userId, 2);
      const res = await h().submit(OP, TYPE, { userId: u!.userId, authenticatorIds: [a] });
      assert.deepEqual(completed(res, deleteAuthenticators).authenticatorIds, [a]);
      assert.deepEqual(
        (await h().query("get_authenticators", { userId: u!.userId })).json.authenticators.map(
          (x: { authenticatorId: string }) => x.authenticatorId,
        ),
        [b],
      );
    });

    it("an unknown id, or another user's, is 404 and deletes nothing", async () => {
      const [u, v] = await addUsersWithKeys(h(), 2);
      const [a] = await withPasskeys(h(), u!.userId, 1);
      const [theirs] = await withPasskeys(h(), v!.userId, 1);
      notFound(await h().submit(OP, TYPE, { userId: u!.userId, authenticatorIds: [a, MISSING] }));
      notFound(await h().submit(OP, TYPE, { userId: u!.userId, authenticatorIds: [theirs] }));
      notFound(await h().submit(OP, TYPE, { userId: MISSING, authenticatorIds: [a] }));
      assert.equal((await h().query("get_authenticators", { userId: u!.userId })).json.authenticators.length, 1);
      assert.equal((await h().query("get_authenticators", { userId: v!.userId })).json.authenticators.length, 1);
    });

    it("a user deletes its own passkeys without a policy, not another user's (403)", async () => {
      const [u, v] = await addUsersWithKeys(h(), 2);
      const [mine] = await withPasskeys(h(), u!.userId, 1, u);
      const [theirs] = await withPasskeys(h(), v!.userId, 1, v);
      forbidden(await h().submit(OP, TYPE, { userId: v!.userId, authenticatorIds: [theirs] }, { as: u }));
      completed(await h().submit(OP, TYPE, { userId: u!.userId, authenticatorIds: [mine] }, { as: u }), deleteAuthenticators);
    });

    it("a root user's last lasting credential cannot be deleted (400 FAILED_PRECONDITION), a second one can", async () => {
      const pk = new SoftPasskey();
      const pk2 = new SoftPasskey();
      const sub = completed(
        await h().submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", {
          subOrganizationName: "delete_authenticators sub",
          rootQuorumThreshold: 1,
          rootUsers: [{ userName: "pk", apiKeys: [], authenticators: [pk.registration(), pk2.registration()], oauthProviders: [] }],
        }),
        "createSubOrganizationResultV8",
      );
      const userId = sub.rootUserIds[0] as string;
      const listed = (await h().query("get_authenticators", { userId }, { organizationId: sub.subOrganizationId })).json.authenticators as {
        authenticatorId: string;
        credentialId: string;
      }[];
      const ids = listed.map((x) => x.authenticatorId);
      const first = listed.find((x) => x.credentialId === pk.id)!.authenticatorId;
      const second = listed.find((x) => x.credentialId === pk2.id)!.authenticatorId;
      precondition(await submitWithPasskey(h(), pk, OP, TYPE, { userId, authenticatorIds: ids }, sub.subOrganizationId), /last credential/);
      const res = await submitWithPasskey(h(), pk, OP, TYPE, { userId, authenticatorIds: [second] }, sub.subOrganizationId);
      completed(res, deleteAuthenticators);
      precondition(
        await submitWithPasskey(h(), pk, OP, TYPE, { userId, authenticatorIds: [first] }, sub.subOrganizationId),
        /last credential/,
      );
    });

    it("the same body twice is one activity; malformed ids are 400", async () => {
      const [a] = await withPasskeys(h(), h().root.userId, 1);
      await assertIdempotent(h(), OP, TYPE, { userId: h().root.userId, authenticatorIds: [a] });
      invalidRequest(await h().submit(OP, TYPE, { userId: h().root.userId, authenticatorIds: [] }), /1 to 100/, [
        "parameters.authenticatorIds",
      ]);
      invalidRequest(await h().submit(OP, TYPE, { userId: h().root.userId, authenticatorIds: ["x"] }), undefined, [
        "parameters.authenticatorIds[0]",
      ]);
    });
  },
  undefined,
  { logins: { ...DEFAULT_LOGIN_SETTINGS, webauthn: TEST_WEBAUTHN } },
);
