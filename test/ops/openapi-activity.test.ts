// The OpenAPI document describes every field the service returns: real responses (an
// answer with app proofs, one awaiting consensus, a vote's answer, get_activity,
// list_activities) are checked against the served document's schemas, with every object
// closed (no property the document lacks). The Activity schema is the one
// views/activity.ts is typed from, and each activity's result schema the one its execute
// is typed by.
import { it } from "node:test";
import assert from "node:assert/strict";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { completed, onSqlite, twoOfTwo, type Creds, type Harness, type Json } from "../helpers/inproc.ts";
import { ACTIVITIES } from "../../src/activities/registry.ts";

type Schema = Record<string, unknown>;

/**
 * A JSON Schema check for the subset TypeBox emits (type, properties, required,
 * patternProperties, additionalProperties, items, const, anyOf/oneOf). Objects without
 * additionalProperties or patternProperties are closed: an undocumented property fails.
 */
function violations(schema: Schema, value: unknown, at = "$"): string[] {
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
    const alts = (schema.anyOf ?? schema.oneOf) as Schema[];
    return alts.some((s) => violations(s, value, at).length === 0) ? [] : [`${at}: matches no alternative`];
  }
  if ("const" in schema && value !== schema.const) return [`${at}: expected ${JSON.stringify(schema.const)}`];
  switch (schema.type) {
    case "string":
      return typeof value === "string" ? [] : [`${at}: expected a string`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${at}: expected a boolean`];
    case "integer":
      return Number.isInteger(value) ? [] : [`${at}: expected an integer`];
    case "number":
      return typeof value === "number" ? [] : [`${at}: expected a number`];
    case "array":
      if (!Array.isArray(value)) return [`${at}: expected an array`];
      return value.flatMap((v, i) => violations((schema.items ?? {}) as Schema, v, `${at}[${i}]`));
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${at}: expected an object`];
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, Schema>);
      const out = ((schema.required ?? []) as string[]).filter((k) => !(k in value)).map((k) => `${at}.${k}: missing`);
      for (const [k, v] of Object.entries(value)) {
        if (Object.hasOwn(props, k)) out.push(...violations(props[k]!, v, `${at}.${k}`));
        else if (patterns.some(([p]) => new RegExp(p).test(k)))
          out.push(...patterns.filter(([p]) => new RegExp(p).test(k)).flatMap(([, s]) => violations(s, v, `${at}.${k}`)));
        else if (schema.additionalProperties !== true) out.push(`${at}.${k}: not in the document`);
      }
      return out;
    }
    default:
      return []; // {} (Type.Unknown): anything
  }
}

function assertMatches(schema: Schema, value: unknown, what: string): void {
  const found = violations(schema, value);
  assert.deepEqual(found, [], `${what} does not match the OpenAPI document:\n${found.join("\n")}`);
}

async function documentOf(h: Harness): Promise<Json> {
  const res = await h.app.inject({ method: "GET", url: "/openapi.json" });
  assert.equal(res.statusCode, 200);
  return JSON.parse(res.body) as Json;
}

const responseSchema = (doc: Json, path: string): Schema => doc.paths[path].post.responses["200"].content["application/json"].schema;

/** A submission with top-level fields the harness's `submit` does not send (generateAppProofs). */
async function submitWith(h: Harness, op: string, body: Json, as: Creds) {
  const text = JSON.stringify({ organizationId: as.organizationId, timestampMs: String(Date.now()), ...body });
  const stamp = await new ApiKeyStamper({ apiPublicKey: as.key.publicKey, apiPrivateKey: as.key.privateKey }).stamp(text);
  return h.post(`/public/v1/submit/${op}`, text, { [stamp.stampHeaderName]: stamp.stampHeaderValue });
}

onSqlite("OpenAPI Activity schema", (h) => {
  it("every activity declares a result schema, and its path documents it under its result name", async () => {
    const doc = await documentOf(h());
    for (const def of ACTIVITIES) {
      const activity = responseSchema(doc, `/public/v1/submit/${def.op}`).properties as Record<string, Schema>;
      const result = (activity.activity!.properties as Record<string, Schema>).result!;
      assert.ok((result.properties as Record<string, unknown>)[def.result], `${def.type}: ${def.result} not documented`);
    }
  });

  it("answers, votes, get_activity and list_activities return only documented fields", async () => {
    const doc = await documentOf(h());
    const generic = responseSchema(doc, "/public/v1/query/get_activity");

    // Completed at once, with app proofs.
    const withProofs = await submitWith(
      h(),
      "create_user_tag",
      { type: "ACTIVITY_TYPE_CREATE_USER_TAG", parameters: { userTagName: "proved", userIds: [] }, generateAppProofs: true },
      h().root,
    );
    completed(withProofs, "createUserTagResult");
    assert.ok(Array.isArray(withProofs.json.activity.appProofs) && withProofs.json.activity.appProofs.length > 0, "app proofs returned");
    assertMatches(responseSchema(doc, "/public/v1/submit/create_user_tag"), withProofs.json, "create_user_tag answer (app proofs)");
    assertMatches(generic, withProofs.json, "create_user_tag answer against the generic Activity");

    // Awaiting consensus, then approved: votes carry their users.
    const { a, b } = await twoOfTwo(h());
    const pending = await submitWith(
      h(),
      "create_user_tag",
      { type: "ACTIVITY_TYPE_CREATE_USER_TAG", parameters: { userTagName: "pending", userIds: [] }, generateAppProofs: true },
      a,
    );
    assert.equal(pending.json.activity.status, "ACTIVITY_STATUS_CONSENSUS_NEEDED");
    assertMatches(responseSchema(doc, "/public/v1/submit/create_user_tag"), pending.json, "answer awaiting consensus");
    const seen = await h().query("get_activity", { activityId: pending.json.activity.id }, { as: b });
    assert.equal(seen.json.activity.canApprove, true);
    assertMatches(generic, seen.json, "get_activity");
    const vote = await h().submit(
      "approve_activity",
      "ACTIVITY_TYPE_APPROVE_ACTIVITY",
      { fingerprint: pending.json.activity.fingerprint },
      { as: b },
    );
    completed(vote, "createUserTagResult");
    assert.equal(vote.json.activity.votes.length, 2);
    assertMatches(responseSchema(doc, "/public/v1/submit/approve_activity"), vote.json, "approve_activity answer");

    const listed = await h().query("list_activities", {}, { as: a });
    assert.ok(listed.json.activities.length >= 1);
    assertMatches(responseSchema(doc, "/public/v1/query/list_activities"), listed.json, "list_activities");
  });

  it("the check fails on a field the document lacks", async () => {
    const doc = await documentOf(h());
    const res = await h().query("list_activities", {});
    const extra = { activities: res.json.activities.map((a: Json) => ({ ...a, undocumented: 1 })) };
    assert.notDeepEqual(violations(responseSchema(doc, "/public/v1/query/list_activities"), extra), []);
  });
});
