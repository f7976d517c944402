// Syntax tree of a policy expression. Every node keeps its start position (for
// compile errors) and end offset (so runtime errors can quote the source text).

import type { SourcePos } from "./errors.ts";

interface NodeBase {
  readonly pos: SourcePos;
  readonly end: number;
}

export interface BoolLit extends NodeBase {
  readonly kind: "bool";
  readonly value: boolean;
}
export interface IntLit extends NodeBase {
  readonly kind: "int";
  readonly value: bigint;
  /** Above the i128 range, so typed uint. */
  readonly uint: boolean;
}
export interface StrLit extends NodeBase {
  readonly kind: "string";
  readonly value: string;
}
export interface ListLit extends NodeBase {
  readonly kind: "list";
  readonly items: readonly Expr[];
}
/** A keyword root (`activity`, `approvers`, ...) or a lambda variable. */
export interface Ident extends NodeBase {
  readonly kind: "ident";
  readonly name: string;
}
export interface Member extends NodeBase {
  readonly kind: "member";
  readonly object: Expr;
  readonly name: string;
  readonly namePos: SourcePos;
}
export interface Index extends NodeBase {
  readonly kind: "index";
  readonly object: Expr;
  readonly index: Expr;
}
/** `x[start..stop]`, end-exclusive. */
export interface Slice extends NodeBase {
  readonly kind: "slice";
  readonly object: Expr;
  readonly start: Expr;
  readonly stop: Expr;
}
/** `x.all(v, P)`, `x.any(v, P)`, `x.filter(v, P)`. */
export interface Lambda extends NodeBase {
  readonly kind: "lambda";
  readonly method: "all" | "any" | "filter";
  readonly methodPos: SourcePos;
  readonly object: Expr;
  readonly variable: string;
  readonly variablePos: SourcePos;
  readonly body: Expr;
}
export interface Contains extends NodeBase {
  readonly kind: "contains";
  readonly methodPos: SourcePos;
  readonly object: Expr;
  readonly arg: Expr;
}
/** `x.count()` or `x.count`. */
export interface Count extends NodeBase {
  readonly kind: "count";
  readonly methodPos: SourcePos;
  readonly object: Expr;
}
/** `Timestamp(...)`, `CronSpan(...)`, or an unknown function the checker rejects. */
export interface Call extends NodeBase {
  readonly kind: "call";
  readonly name: string;
  readonly args: readonly Expr[];
}
export interface Not extends NodeBase {
  readonly kind: "not";
  readonly operand: Expr;
}
/** A whole `a && b && c` (or `||`) chain, flattened so long chains do not nest deeply. */
export interface Logical extends NodeBase {
  readonly kind: "logical";
  readonly op: "&&" | "||";
  readonly operands: readonly Expr[];
}
export type CompareOp = "==" | "!=" | "<" | ">" | "<=" | ">=" | "in";
export interface Compare extends NodeBase {
  readonly kind: "compare";
  readonly op: CompareOp;
  readonly opPos: SourcePos;
  readonly left: Expr;
  readonly right: Expr;
}

export type Expr =
  BoolLit | IntLit | StrLit | ListLit | Ident | Member | Index | Slice | Lambda | Contains | Count | Call | Not | Logical | Compare;
