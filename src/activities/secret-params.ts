// Secret parameters (docs/activities.md §10): the fields an activity definition declares in
// `secretParams` (paths of string fields inside its parameters, e.g. "otpCode") are recorded
// sealed with the master key, bound to the activity, and shown to readers as a fixed
// placeholder. This module is the pure part: path checks, the copy of the schema policy
// hooks validate against, redaction, and sealing / opening with a given key.
import { KindGuard, Type, type TObject, type TSchema } from "@sinclair/typebox";
import type { MasterKey } from "../crypto/envelope.ts";
import { AAD } from "../crypto/aad.ts";

/** What every reader of an activity (answers, queries, webhook events) shows instead of a secret parameter. */
export const SECRET_PLACEHOLDER = "<redacted>";

function segmentsOf(path: string): string[] {
  return path.split(".");
}

/**
 * Checks at definition time that each path names a string field through nested objects of
 * the parameter schema: a typo would leave a secret in plain, so it stops the service.
 */
export function checkSecretPaths(type: string, schema: TObject, paths: readonly string[]): void {
  for (const path of paths) {
    let at: TSchema = schema;
    for (const seg of segmentsOf(path)) {
      if (!KindGuard.IsObject(at) || !Object.hasOwn(at.properties, seg))
        throw new Error(`${type}: secretParams path "${path}" names no field of the parameters`);
      at = at.properties[seg]!;
    }
    if (!KindGuard.IsString(at)) throw new Error(`${type}: secretParams path "${path}" must name a string field`);
  }
}

/**
 * The parameter schema with each secret field accepting any string: what the policy hooks'
 * parameters (secrets replaced by the placeholder or still sealed) are checked against. The
 * static type is the schema's own, as every secret field is a string either way.
 */
export function relaxSecrets<P extends TObject>(schema: P, paths: readonly string[]): P {
  let out = schema;
  for (const path of paths) out = relaxAt(out, segmentsOf(path));
  return out;
}

function relaxAt<S extends TObject>(schema: S, segs: readonly string[]): S {
  const [seg, ...rest] = segs;
  const field = schema.properties[seg!]!;
  const loose = KindGuard.IsOptional(field) ? Type.Optional(Type.String()) : Type.String();
  const replaced = rest.length && KindGuard.IsObject(field) ? relaxAt(field, rest) : loose;
  // A shallow copy keeps the schema's own options and TypeBox's symbols (Kind, Optional).
  return { ...schema, properties: { ...schema.properties, [seg!]: replaced } };
}

/**
 * A copy of `params` with the string at each path replaced by `f(value, path)`. Objects
 * along a path are copied, never changed in place; a missing field stays missing.
 */
export function mapSecrets(
  params: Record<string, unknown>,
  paths: readonly string[],
  f: (value: string, path: string) => string,
): Record<string, unknown> {
  let out = params;
  for (const path of paths) out = mapAt(out, segmentsOf(path), (v) => f(v, path));
  return out;
}

function mapAt(obj: Record<string, unknown>, segs: readonly string[], f: (value: string) => string): Record<string, unknown> {
  const [seg, ...rest] = segs;
  if (!Object.hasOwn(obj, seg!)) return obj;
  const v = obj[seg!];
  let replaced: unknown;
  if (rest.length === 0) {
    if (typeof v !== "string") return obj;
    replaced = f(v);
  } else {
    if (!isRecord(v)) return obj;
    replaced = mapAt(v, rest, f);
  }
  // Spread and a computed key define properties: a stored key named "__proto__" stays a plain key.
  return { ...obj, [seg!]: replaced };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The parameters as readers see them: each secret field holds the placeholder. */
export function redactSecrets(params: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  return paths.length ? mapSecrets(params, paths, () => SECRET_PLACEHOLDER) : params;
}

/** The associated data binding a sealed parameter to its activity and field (docs/activities.md §10.2). */
export function secretAad(activityId: string, path: string): string {
  return AAD.secretParam(activityId, path);
}

export function sealSecrets(
  params: Record<string, unknown>,
  paths: readonly string[],
  key: MasterKey,
  activityId: string,
): Promise<Record<string, unknown>> {
  return mapSecretsAsync(params, paths, (v, path) => key.seal(v, secretAad(activityId, path)));
}

/** Throws when a value was sealed for another activity or field, or with another key. */
export function openSecrets(
  params: Record<string, unknown>,
  paths: readonly string[],
  key: MasterKey,
  activityId: string,
): Promise<Record<string, unknown>> {
  return mapSecretsAsync(params, paths, async (v, path) => (await key.open(v, secretAad(activityId, path))).toString("utf8"));
}

/** mapSecrets with an asynchronous `f` (sealing goes through the key-encryption key: docs/custody.md §3). */
async function mapSecretsAsync(
  params: Record<string, unknown>,
  paths: readonly string[],
  f: (value: string, path: string) => Promise<string>,
): Promise<Record<string, unknown>> {
  const found = new Map<string, string>();
  mapSecrets(params, paths, (v, path) => (found.set(path, v), v));
  const replaced = new Map<string, string>();
  for (const [path, v] of found) replaced.set(path, await f(v, path));
  return mapSecrets(params, paths, (v, path) => replaced.get(path) ?? v);
}

/**
 * A vote's message is the exact body its voter signed. When that body is a submission of the
 * activity's own type (the submitter's vote, or another user's identical resubmission) it
 * carries the secrets too: `f` rewrites them under `parameters`. Any other body (an
 * approve_activity) is returned as it is.
 */
export function mapMessageSecrets(
  message: string,
  type: string,
  paths: readonly string[],
  f: (params: Record<string, unknown>) => Record<string, unknown>,
): string {
  if (!paths.length) return message;
  let body: unknown;
  try {
    body = JSON.parse(message);
  } catch {
    return message;
  }
  if (!isRecord(body) || body.type !== type || !isRecord(body.parameters)) return message;
  return JSON.stringify({ ...body, parameters: f(body.parameters) });
}

/** mapMessageSecrets with an asynchronous `f`. */
export async function mapMessageSecretsAsync(
  message: string,
  type: string,
  paths: readonly string[],
  f: (params: Record<string, unknown>) => Promise<Record<string, unknown>>,
): Promise<string> {
  let params: Record<string, unknown> | undefined;
  mapMessageSecrets(message, type, paths, (p) => (params = p));
  if (!params) return message;
  const replaced = await f(params);
  return mapMessageSecrets(message, type, paths, () => replaced);
}

/**
 * pino redaction paths for the secret fields of these definitions, wherever a request body or
 * parameters object could be logged (docs/activities.md §10.4).
 */
export function secretLogPaths(defs: readonly { route: string; secretParams?: readonly string[] }[]): string[] {
  const fields = new Set<string>();
  for (const d of defs) for (const p of d.secretParams ?? []) fields.add(p);
  const out: string[] = [];
  for (const p of fields) {
    const tail = segmentsOf(p)
      .map((s) => `[${JSON.stringify(s)}]`)
      .join("");
    for (const root of ["req.body.parameters", "body.parameters", "parameters", "params"]) out.push(`${root}${tail}`);
  }
  return out;
}
