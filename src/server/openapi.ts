// The OpenAPI document, derived from the registries: an operation exists in the document
// exactly when it exists in the router.
import { Type } from "@sinclair/typebox";
import { ACTIVITIES, VOTES } from "../activities/registry.ts";
import { QUERIES } from "../queries/registry.ts";
import { Activity, ErrorBody } from "../schemas/views.ts";
import type { SubmitRoute } from "../activities/define.ts";

const stampHeader = {
  name: "X-Stamp",
  in: "header",
  required: true,
  description: "base64url(JSON{publicKey, scheme, signature}): an API key signature over the exact request body",
  schema: { type: "string" },
};

const errorResponse = {
  description: "Rejected: gRPC-style status body",
  content: { "application/json": { schema: ErrorBody } },
};

/**
 * The Activity a submit path answers with: an activity path's result holds one of its
 * definitions' result objects, under that definition's result name; a vote answers with
 * the target activity, whatever its type.
 */
function answeredActivity(defs: SubmitRoute[]) {
  const results = defs.flatMap((d) => (d.route === "activity" ? [[d.result, Type.Optional(d.returns)] as const] : []));
  if (results.length < defs.length) return Activity;
  const result = Type.Object(Object.fromEntries(results), {
    additionalProperties: false,
    description: "one key once completed: the result object of the submitted type",
  });
  return { ...Activity, properties: { ...Activity.properties, result } };
}

function submitOperation(op: string, defs: SubmitRoute[]) {
  const variants = defs.map((d) => ({
    type: "object",
    title: d.type,
    required: ["type", "timestampMs", "organizationId", "parameters"],
    properties: {
      type: { const: d.type },
      timestampMs: { type: "string", description: "request time, epoch milliseconds" },
      organizationId: { type: "string" },
      parameters: d.params,
      generateAppProofs: { type: "boolean" },
    },
  }));
  return {
    post: {
      operationId: `submit_${op}`,
      summary: defs[0]!.summary,
      description: defs
        .map((d) =>
          "result" in d
            ? `${d.type}: intent \`${d.intent}\`, result \`${d.result}\``
            : `${d.type}: intent \`${d.intent}\`; answers with the target activity`,
        )
        .join("\n\n"),
      tags: ["activities"],
      parameters: [stampHeader],
      requestBody: {
        required: true,
        content: { "application/json": { schema: variants.length === 1 ? variants[0] : { oneOf: variants } } },
      },
      responses: {
        "200": {
          description: "The activity",
          content: { "application/json": { schema: { type: "object", properties: { activity: answeredActivity(defs) } } } },
        },
        default: errorResponse,
      },
    },
  };
}

export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const byOp = new Map<string, SubmitRoute[]>();
  for (const d of [...ACTIVITIES, ...VOTES]) byOp.set(d.op, [...(byOp.get(d.op) ?? []), d]);
  for (const [op, defs] of byOp) paths[`/public/v1/submit/${op}`] = submitOperation(op, defs);
  for (const q of QUERIES) {
    paths[`/public/v1/query/${q.op}`] = {
      post: {
        operationId: `query_${q.op}`,
        summary: q.summary,
        tags: ["queries"],
        parameters: [stampHeader],
        requestBody: { required: true, content: { "application/json": { schema: q.request } } },
        responses: {
          "200": { description: "OK", content: { "application/json": { schema: q.response } } },
          default: errorResponse,
        },
      },
    };
  }
  // Round-trip through JSON: drops TypeBox's symbol-keyed metadata.
  return JSON.parse(
    JSON.stringify({
      openapi: "3.1.0",
      info: {
        title: "Sigil public API",
        version,
        description: "Every state change is an activity (submit); every read is a query. Requests are stamped (X-Stamp).",
      },
      paths,
    }),
  ) as Record<string, unknown>;
}
