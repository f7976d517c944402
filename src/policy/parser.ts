// Tokens → AST by recursive descent, following the grammar of
// docs/policy-language.md §2.1 exactly. Recursion is bounded by MAX_DEPTH so hostile
// input cannot exhaust the stack; `&&`/`||` chains are collected into one
// node instead of nesting.

import type { CompareOp, Expr, Lambda } from "./ast.ts";
import { PolicyCompileError, type Field, type SourcePos } from "./errors.ts";
import { describeToken, I128_MAX, type Token, type TokenKind } from "./lexer.ts";

/** Deepest allowed nesting of sub-expressions, parentheses, lambdas and postfix chains. */
export const MAX_DEPTH = 64;

const COMPARE_OPS: ReadonlySet<TokenKind> = new Set<TokenKind>(["==", "!=", "<", ">", "<=", ">=", "in"]);
const LAMBDA_METHODS = new Set(["all", "any", "filter"]);

// Words people reach for from other languages, with what to write instead. A Map: the
// key is an identifier from the policy text, which may well be "constructor".
const WORD_HINTS: ReadonlyMap<string, string> = new Map([
  ["and", " (logical and is written '&&')"],
  ["or", " (logical or is written '||')"],
  ["not", " (negation is written '!')"],
]);

export function parse(field: Field, tokens: readonly Token[]): Expr {
  let at = 0;
  let depth = 0;

  const peek = (): Token => tokens[at]!;
  const peekKind = (): TokenKind => tokens[at]!.kind;
  const next = (): Token => tokens[at++]!;
  const fail = (pos: SourcePos, problem: string): never => {
    throw new PolicyCompileError(field, pos, problem);
  };
  const hint = (t: Token): string => (t.kind === "ident" ? (WORD_HINTS.get(t.text) ?? "") : "");
  const found = (t: Token): string => describeToken(t) + hint(t);
  const expect = (kind: TokenKind, context: string): Token => {
    const t = peek();
    if (t.kind !== kind) fail(t.pos, `expected '${kind}' ${context}, found ${found(t)}`);
    return next();
  };
  const lastEnd = (): number => tokens[at - 1]!.end;
  const enter = (pos: SourcePos): void => {
    if (++depth > MAX_DEPTH) fail(pos, `expression is nested too deeply (more than ${MAX_DEPTH} levels)`);
  };

  const root = expr();
  const t = peek();
  if (t.kind !== "eof") {
    fail(
      t.pos,
      COMPARE_OPS.has(t.kind)
        ? `comparison operators cannot be chained; found a second '${t.text}' (add parentheses)`
        : `unexpected ${describeToken(t)} after a complete expression${hint(t)}`,
    );
  }
  return root;

  function expr(): Expr {
    enter(peek().pos);
    const e = logical("||", () => logical("&&", compare));
    depth--;
    return e;
  }

  function logical(op: "&&" | "||", operand: () => Expr): Expr {
    const first = operand();
    if (peekKind() !== op) return first;
    const operands = [first];
    while (peekKind() === op) {
      next();
      operands.push(operand());
    }
    return { kind: "logical", op, operands, pos: first.pos, end: lastEnd() };
  }

  function compare(): Expr {
    const left = unary();
    const opTok = peek();
    if (!COMPARE_OPS.has(opTok.kind)) return left;
    next();
    const right = unary();
    const again = peek();
    if (COMPARE_OPS.has(again.kind)) {
      fail(again.pos, `comparison operators cannot be chained; found '${again.text}' after '${opTok.text}' (add parentheses)`);
    }
    return { kind: "compare", op: opTok.kind as CompareOp, opPos: opTok.pos, left, right, pos: left.pos, end: lastEnd() };
  }

  function unary(): Expr {
    const t = peek();
    if (t.kind === "!") {
      next();
      enter(t.pos);
      const operand = unary();
      depth--;
      return { kind: "not", operand, pos: t.pos, end: lastEnd() };
    }
    if (t.kind === "-") {
      next();
      const lit = peek();
      if (lit.kind !== "int") fail(t.pos, "'-' is only allowed directly before an integer literal");
      next();
      const value = -lit.value;
      if (value < -I128_MAX - 1n) fail(t.pos, "integer literal out of range (below the int minimum -2^127)");
      return { kind: "int", value, uint: false, pos: t.pos, end: lastEnd() };
    }
    return postfix();
  }

  function postfix(): Expr {
    let e = primary();
    const saved = depth;
    for (;;) {
      const t = peek();
      if (t.kind === ".") {
        enter(t.pos);
        next();
        e = afterDot(e);
      } else if (t.kind === "[") {
        enter(t.pos);
        next();
        e = indexOrSlice(e);
      } else {
        depth = saved;
        return e;
      }
    }
  }

  function afterDot(object: Expr): Expr {
    const nameTok = peek();
    if (nameTok.kind !== "ident") return fail(nameTok.pos, `expected a field or method name after '.', found ${found(nameTok)}`);
    next();
    const name = nameTok.text;
    const pos = object.pos;
    if (LAMBDA_METHODS.has(name)) {
      expect("(", `after '${name}'`);
      const v = peek();
      if (v.kind !== "ident") {
        fail(v.pos, `the first argument of ${name} must be a variable name, found ${found(v)}`);
      }
      next();
      if (peekKind() !== ",") {
        fail(
          peek().pos,
          `expected ',' after the ${name} variable '${v.text}', found ${found(peek())} (write ${name}(${v.text}, <predicate>))`,
        );
      }
      next();
      const body = expr();
      expect(")", `to close ${name}(...)`);
      const lambda: Lambda = {
        kind: "lambda",
        method: name as Lambda["method"],
        methodPos: nameTok.pos,
        object,
        variable: v.text,
        variablePos: v.pos,
        body,
        pos,
        end: lastEnd(),
      };
      return lambda;
    }
    if (name === "contains") {
      expect("(", "after 'contains'");
      if (peekKind() === ")") fail(peek().pos, "contains expects 1 argument, found 0");
      const arg = expr();
      if (peekKind() === ",") fail(peek().pos, "contains expects 1 argument, found more");
      expect(")", "to close contains(...)");
      return { kind: "contains", methodPos: nameTok.pos, object, arg, pos, end: lastEnd() };
    }
    if (name === "count") {
      if (peekKind() === "(") {
        next();
        if (peekKind() !== ")") fail(peek().pos, "count takes no arguments");
        next();
      }
      return { kind: "count", methodPos: nameTok.pos, object, pos, end: lastEnd() };
    }
    if (peekKind() === "(") {
      fail(nameTok.pos, `unknown method '${name}' (methods are all, any, filter, contains and count)`);
    }
    return { kind: "member", object, name, namePos: nameTok.pos, pos, end: lastEnd() };
  }

  function indexOrSlice(object: Expr): Expr {
    if (peekKind() === "..") fail(peek().pos, "open-ended slices are not supported; write x[a..b]");
    const first = expr();
    if (peekKind() === "..") {
      next();
      if (peekKind() === "]") fail(peek().pos, "open-ended slices are not supported; write x[a..b]");
      const stop = expr();
      expect("]", "to close the slice");
      return { kind: "slice", object, start: first, stop, pos: object.pos, end: lastEnd() };
    }
    expect("]", "to close the index");
    return { kind: "index", object, index: first, pos: object.pos, end: lastEnd() };
  }

  function primary(): Expr {
    const t = next();
    switch (t.kind) {
      case "true":
      case "false":
        return { kind: "bool", value: t.kind === "true", pos: t.pos, end: t.end };
      case "int":
        return { kind: "int", value: t.value, uint: t.uint, pos: t.pos, end: t.end };
      case "string":
        return { kind: "string", value: t.text, pos: t.pos, end: t.end };
      case "ident":
        return peekKind() === "(" ? call(t) : { kind: "ident", name: t.text, pos: t.pos, end: t.end };
      case "(": {
        const inner = expr();
        expect(")", "to close '('");
        return inner;
      }
      case "[":
        return listLiteral(t);
      default:
        at--;
        return fail(t.pos, `expected an expression, found ${found(t)}`);
    }
  }

  function call(name: Token): Expr {
    next();
    const args = commaList(")", `to close ${name.text}(...)`, "argument list");
    return { kind: "call", name: name.text, args, pos: name.pos, end: lastEnd() };
  }

  function listLiteral(open: Token): Expr {
    const items = commaList("]", "to close the list", "list");
    return { kind: "list", items, pos: open.pos, end: lastEnd() };
  }

  // `e1, e2, ...` up to the closing token (already past the opening one); no trailing comma.
  function commaList(close: "]" | ")", context: string, what: string): Expr[] {
    const items: Expr[] = [];
    if (peekKind() === close) {
      next();
      return items;
    }
    for (;;) {
      items.push(expr());
      if (peekKind() !== ",") break;
      const comma = next();
      if (peekKind() === close) fail(comma.pos, `trailing comma in ${what}`);
    }
    expect(close, context);
    return items;
  }
}
