// Field schemas and checks shared by the TVC activities (docs/tvc.md §2–4).
import { Type, type Static } from "@sinclair/typebox";
import { invalid } from "../../errors.ts";
import { Name, UUID_PATTERN, maxItems } from "../../schemas/common.ts";
import { p256KeyProblem, normalizeP256Key } from "../../tvc/operator-keys.ts";

/** Most operators in one set (upstream's documented limit). */
export const MAX_SET_OPERATORS = 50;
/** Most replicas one deployment may ask for: the local runtime runs them all on this host. */
export const MAX_REPLICAS = 8;

/**
 * An int64 as the SDK sends it: a JSON number, or (protojson renders int64 as strings) a
 * string of decimal digits. Range checks are the caller's (`intOf` then compare).
 */
export const Int64 = (what: string) =>
  Type.Union([Type.Integer(), Type.String({ pattern: "^-?[0-9]{1,15}$" })], {
    errorMessage: `${what} must be an integer (a number or a string of decimal digits)`,
  });

export const intOf = (v: number | string): number => (typeof v === "number" ? v : Number(v));

export const P256Hex = (what: string) =>
  Type.String({ minLength: 1, maxLength: 130, errorMessage: `${what} must be a P-256 public key in hex (compressed or uncompressed)` });

export const OperatorParams = Type.Object({
  name: Name("operator name"),
  publicKey: P256Hex("publicKey"),
});

export const OperatorSetParams = Type.Object({
  name: Name("operator set name"),
  newOperators: Type.Optional(maxItems(OperatorParams, "newOperators", MAX_SET_OPERATORS)),
  existingOperatorIds: Type.Optional(
    maxItems(
      Type.String({ pattern: UUID_PATTERN, errorMessage: "must be an operator id (UUID)" }),
      "existingOperatorIds",
      MAX_SET_OPERATORS,
    ),
  ),
  threshold: Int64("threshold"),
});
export type OperatorSetParamsT = Static<typeof OperatorSetParams>;

/** A P-256 key field, validated and normalised (compressed lower-case hex), or a 400 naming it. */
export function p256Field(hex: string, field: string): string {
  const problem = p256KeyProblem(hex);
  if (problem) throw invalid(`${field}: ${problem}`, [{ field, description: problem }]);
  return normalizeP256Key(hex);
}

/**
 * What can be checked of operator set params without the database: keys, duplicates, size,
 * threshold bounds (share sets need at least 2). Returns the normalised keys of newOperators.
 */
export function checkSetParams(p: OperatorSetParamsT, at: string, minThreshold: number): string[] {
  const keys = (p.newOperators ?? []).map((o, i) => p256Field(o.publicKey, `${at}.newOperators[${i}].publicKey`));
  const seenKey = new Map<string, number>();
  keys.forEach((k, i) => {
    const first = seenKey.get(k);
    if (first !== undefined)
      throw invalid(`${at}.newOperators[${i}].publicKey: the same key as newOperators[${first}]`, [
        { field: `${at}.newOperators[${i}].publicKey`, description: "an operator may appear only once in a set" },
      ]);
    seenKey.set(k, i);
  });
  const ids = p.existingOperatorIds ?? [];
  const seenId = new Map<string, number>();
  ids.forEach((id, i) => {
    const lower = id.toLowerCase();
    const first = seenId.get(lower);
    if (first !== undefined)
      throw invalid(`${at}.existingOperatorIds[${i}]: the same operator as existingOperatorIds[${first}]`, [
        { field: `${at}.existingOperatorIds[${i}]`, description: "an operator may appear only once in a set" },
      ]);
    seenId.set(lower, i);
  });
  const members = keys.length + ids.length;
  if (members === 0)
    throw invalid(`${at}: an operator set needs at least one operator`, [
      { field: `${at}.newOperators`, description: "give newOperators or existingOperatorIds" },
    ]);
  if (members > MAX_SET_OPERATORS) {
    throw invalid(`${at}: ${members} operators; a set holds at most ${MAX_SET_OPERATORS}`, [
      { field: `${at}.newOperators`, description: `at most ${MAX_SET_OPERATORS} operators per set` },
    ]);
  }
  checkThreshold(intOf(p.threshold), members, `${at}.threshold`, minThreshold);
  return keys;
}

export function checkThreshold(threshold: number, members: number, field: string, minThreshold: number): void {
  if (!Number.isSafeInteger(threshold) || threshold < minThreshold || threshold > members) {
    const description = `must be from ${minThreshold} to the number of operators (${members})${minThreshold > 1 ? "; a share set's threshold is at least 2" : ""}`;
    throw invalid(`${field}: ${threshold} ${description}`, [{ field, description }]);
  }
}

/** The id field (`…SetId`) or params field given: exactly one of them (an empty id counts as absent). */
export function oneOf(id: string | undefined, params: unknown, idField: string, paramsField: string): "id" | "params" {
  const hasId = id !== undefined && id !== "";
  const hasParams = params !== undefined;
  if (hasId === hasParams) {
    const description = hasId ? `give ${idField} or ${paramsField}, not both` : `give ${idField} or ${paramsField}`;
    throw invalid(`parameters.${idField}: ${description}`, [
      { field: `parameters.${idField}`, description },
      { field: `parameters.${paramsField}`, description },
    ]);
  }
  if (hasId && !new RegExp(UUID_PATTERN).test(id!)) {
    throw invalid(`parameters.${idField}: must be an operator set id (UUID)`, [
      { field: `parameters.${idField}`, description: "must be an operator set id (UUID)" },
    ]);
  }
  return hasId ? "id" : "params";
}
