// Two stores in one process (two in-process apps, each with its own database and service
// state) never answer from each other's data: the caches of database rows live on the
// service state (src/service-state.ts), one per store, not in module globals.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { completed, inproc, newEndpoint, type Harness } from "../helpers/inproc.ts";
import { insertOrganization } from "../../src/store/organizations.ts";
import { newId } from "../../src/store/util.ts";

const eventsOf = async (h: Harness, activityId: string) =>
  (await h.service.store.db.selectFrom("webhook_events").select("id").where("activity_id", "=", activityId).execute()).length;

async function tagActivity(h: Harness, name: string): Promise<string> {
  const res = await h.submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG", { userTagName: name, userIds: [] });
  completed(res, "createUserTagResult");
  return res.json.activity.id as string;
}

describe("two stores in one process", () => {
  let a: Harness;
  let b: Harness;
  before(async () => {
    [a, b] = await Promise.all([inproc("sqlite"), inproc("sqlite")]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it("have a service state each", () => {
    assert.notEqual(a.service.state, b.service.state);
  });

  it("webhook listeners: an endpoint in one store is not a listener in the other", async () => {
    // Both databases go to the same webhook version; each must still answer from its own rows.
    await newEndpoint(a);
    assert.equal(await eventsOf(b, await tagActivity(b, "b-before")), 0, "store B has no endpoint: no event");
    assert.equal(await eventsOf(a, await tagActivity(a, "a-listens")), 1, "store A has an endpoint: one event");
    await newEndpoint(b);
    assert.equal(await eventsOf(b, await tagActivity(b, "b-listens")), 1, "store B has an endpoint now: one event");
    assert.equal(await eventsOf(a, await tagActivity(a, "a-still")), 1);
  });

  it("organization chains: the same organization id has its own ancestors in each store", async () => {
    const id = newId();
    const now = Date.now();
    const org = { name: "same id", root_quorum_threshold: 1, policy_version: 0, settings: "{}", created_at: now, updated_at: now };
    // In A a root organization; in B a sub-organization of B's root.
    await insertOrganization(a.service.store.db, { ...org, id, parent_id: null });
    await insertOrganization(b.service.store.db, { ...org, id, parent_id: b.root.organizationId });
    // A reads (and caches) the chain [id]: A's root is no ancestor, its key is not found there.
    const inA = await a.query("list_users", { organizationId: id });
    assert.equal(inA.status, 401, JSON.stringify(inA.json));
    // B's root is an ancestor in B: its key acts on the sub-organization.
    const inB = await b.query("list_users", { organizationId: id });
    assert.equal(inB.status, 200, JSON.stringify(inB.json));
    assert.deepEqual(inB.json.users, []);
  });
});
