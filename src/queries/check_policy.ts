// check_policy: a policy's expressions compiled as create_policy compiles them, nothing saved
// (docs/policy-dry-run.md §2). Every error comes back as data — field, line, column and UTF-16
// offset — so an editor can mark it; the request itself is refused only when malformed.
import { setImmediate as turn } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import { OrganizationId } from "../schemas/common.ts";
import { compileSubmitted, PolicyCompileError, type Field } from "../policy/index.ts";
import { defineQuery } from "./define.ts";

// Longer than the language accepts (8,192), so an over-long expression is reported as its error.
const Source = Type.Optional(Type.String({ maxLength: 16_384, errorMessage: "must be a policy expression of at most 16384 characters" }));
const FieldName = Type.Union([Type.Literal("condition"), Type.Literal("consensus"), Type.Literal("time"), Type.Literal("effect")]);

const CheckError = Type.Object({
  field: FieldName,
  message: Type.String(),
  line: Type.Number(),
  column: Type.Number(),
  offset: Type.Number(),
});

export interface CheckError {
  field: Field | "effect";
  message: string;
  line: number;
  column: number;
  offset: number;
}

/**
 * The compile errors of a policy's expressions, as create_policy would refuse them (syntax,
 * types, the static cost bound), and each valid expression's worst-case iterations.
 */
/** Drafts stay out of the shared compile cache (docs/policy-dry-run.md §6). */
const DRAFT = { cached: false } as const;

export function checkPolicyText(p: { effect?: string; condition?: string; consensus?: string; time?: string }): {
  errors: CheckError[];
  iterations: Partial<Record<Field, number>>;
} {
  const errors: CheckError[] = [];
  const iterations: Partial<Record<Field, number>> = {};
  if (p.effect !== undefined && p.effect !== "EFFECT_ALLOW" && p.effect !== "EFFECT_DENY") {
    errors.push({ field: "effect", message: "effect must be EFFECT_ALLOW or EFFECT_DENY", line: 1, column: 1, offset: 0 });
  }
  for (const field of ["condition", "consensus", "time"] as const) {
    const source = p[field];
    if (source === undefined) continue;
    try {
      const compiled = compileSubmitted(field, source, DRAFT);
      if (compiled) iterations[field] = compiled.iterations;
    } catch (err) {
      if (!(err instanceof PolicyCompileError)) throw err;
      errors.push({ field, message: err.problem, line: err.line, column: err.column, offset: err.offset });
    }
  }
  return { errors, iterations };
}

export const checkPolicy = defineQuery({
  op: "check_policy",
  summary:
    "Compile a policy's expressions without saving: syntax and type errors and the static cost bound, as create_policy refuses them, each with field, line, column and UTF-16 offset.",
  request: Type.Object({
    organizationId: OrganizationId,
    effect: Type.Optional(Type.String({ maxLength: 64 })),
    condition: Source,
    consensus: Source,
    time: Source,
  }),
  response: Type.Object({
    valid: Type.Boolean(),
    errors: Type.Array(CheckError),
    iterations: Type.Object({
      condition: Type.Optional(Type.Number()),
      consensus: Type.Optional(Type.Number()),
      time: Type.Optional(Type.Number()),
    }),
  }),
  async run(_ctx, req) {
    const { errors, iterations } = checkPolicyText({ ...(req.effect !== undefined ? { effect: req.effect } : {}) });
    for (const field of ["condition", "consensus", "time"] as const) {
      const source = req[field];
      if (source === undefined) continue;
      // An 8 KiB expression compiles in about 10 ms: one field per turn of the event loop.
      await turn();
      const one = checkPolicyText({ [field]: source });
      errors.push(...one.errors);
      Object.assign(iterations, one.iterations);
    }
    return { valid: errors.length === 0, errors, iterations };
  },
});
