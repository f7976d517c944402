// Source text → tokens. The language is tiny and ASCII outside string
// literals, so this is a hand-written scanner; every token remembers where it
// started so later stages can point at it.

import { PolicyCompileError, type Field, type SourcePos } from "./errors.ts";

export type TokenKind =
  | "ident"
  | "int"
  | "string"
  | "true"
  | "false"
  | "in"
  | "&&"
  | "||"
  | "!"
  | "-"
  | "=="
  | "!="
  | "<"
  | ">"
  | "<="
  | ">="
  | "("
  | ")"
  | "["
  | "]"
  | ","
  | ".."
  | "."
  | "eof";

export interface Token {
  readonly kind: TokenKind;
  /** Identifier name, decoded string value, or the operator spelling. */
  readonly text: string;
  /** Integer literals only. */
  readonly value: bigint;
  /** Integer literals only: i128 literals are int, the rest (up to u256) uint. */
  readonly uint: boolean;
  readonly pos: SourcePos;
  /** Offset just past the token. */
  readonly end: number;
}

export const I128_MAX = (1n << 127n) - 1n;
export const U256_MAX = (1n << 256n) - 1n;

const RESERVED: ReadonlyMap<string, TokenKind> = new Map<string, TokenKind>([
  ["true", "true"],
  ["false", "false"],
  ["in", "in"],
]);

// Characters that are errors outside strings, with the reason users most likely need.
const ARITHMETIC = new Set(["+", "*", "/", "%", "^", "~"]);

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isIdentPart(c: number): boolean {
  return isIdentStart(c) || isDigit(c);
}

export function tokenize(field: Field, src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let column = 1;

  const here = (): SourcePos => ({ offset: i, line, column });
  const fail = (pos: SourcePos, problem: string): never => {
    throw new PolicyCompileError(field, pos, problem);
  };
  // Moves one code point forward, keeping line/column right across CRLF, CR, LF and surrogate pairs.
  const step = (): void => {
    const c = src.charCodeAt(i);
    if (c === 10 || (c === 13 && src.charCodeAt(i + 1) !== 10)) {
      i++;
      line++;
      column = 1;
      return;
    }
    const low = src.charCodeAt(i + 1);
    i += c >= 0xd800 && c <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? 2 : 1;
    column++;
  };
  const push = (kind: TokenKind, text: string, pos: SourcePos, value = 0n, uint = false): void => {
    tokens.push({ kind, text, value, uint, pos, end: i });
  };

  while (i < src.length) {
    const c = src.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      step();
      continue;
    }
    const pos = here();
    const ch = src[i]!;
    const next = src[i + 1];

    if (isIdentStart(c)) {
      while (i < src.length && isIdentPart(src.charCodeAt(i))) step();
      const name = src.slice(pos.offset, i);
      push(RESERVED.get(name) ?? "ident", name, pos);
      continue;
    }
    if (isDigit(c)) {
      while (i < src.length && isDigit(src.charCodeAt(i))) step();
      const digits = src.slice(pos.offset, i);
      // 78 digits already exceed u256; stop before BigInt parses something huge.
      const value = digits.length > 80 ? U256_MAX + 1n : BigInt(digits);
      if (value > U256_MAX) fail(pos, "integer literal out of range (above the uint maximum 2^256-1)");
      push("int", digits, pos, value, value > I128_MAX);
      continue;
    }
    if (c === 39) {
      push("string", scanString(pos), pos);
      continue;
    }

    const two = next === undefined ? ch : ch + next;
    switch (two) {
      case "&&":
      case "||":
      case "==":
      case "!=":
      case "<=":
      case ">=":
      case "..":
        step();
        step();
        push(two, two, pos);
        continue;
      case "//":
        fail(pos, "unexpected '/': the policy language has no comments");
    }
    switch (ch) {
      case "!":
      case "-":
      case "<":
      case ">":
      case "(":
      case ")":
      case "[":
      case "]":
      case ",":
      case ".":
        step();
        push(ch, ch, pos);
        continue;
      case "&":
        return fail(pos, "unexpected '&': logical and is written '&&'");
      case "|":
        return fail(pos, "unexpected '|': logical or is written '||'");
      case "=":
        return fail(pos, "unexpected '=': equality is written '=='");
      case '"':
        return fail(pos, "unexpected '\"': strings use single quotes, e.g. 'abc'");
      case "#":
        return fail(pos, "unexpected '#': the policy language has no comments");
      case "{":
      case "}":
        return fail(pos, `unexpected '${ch}': struct literals are not supported`);
    }
    if (ARITHMETIC.has(ch)) fail(pos, `unexpected '${ch}': the policy language has no arithmetic operators`);
    const cp = src.codePointAt(i)!;
    const shown = cp > 32 && cp < 127 ? `'${ch}'` : `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
    fail(pos, `unexpected character ${shown}`);
  }
  tokens.push({ kind: "eof", text: "", value: 0n, uint: false, pos: here(), end: i });
  return tokens;

  // Single-quoted string; only \' and \\ are escapes, every other character is literal.
  function scanString(start: SourcePos): string {
    step();
    let out = "";
    let chunk = i;
    for (;;) {
      if (i >= src.length) return fail(start, "unterminated string literal");
      const c = src.charCodeAt(i);
      if (c === 39) {
        out += src.slice(chunk, i);
        step();
        return out;
      }
      if (c === 92) {
        out += src.slice(chunk, i);
        const escPos = here();
        const e = src[i + 1];
        if (e !== "'" && e !== "\\") {
          const shown = e === undefined ? "end of input" : e === "\n" ? "a newline" : `'\\${e}'`;
          return fail(escPos, `invalid escape ${shown} in string literal (only \\' and \\\\ are allowed)`);
        }
        step();
        step();
        out += e;
        chunk = i;
        continue;
      }
      step();
    }
  }
}

/** How a token is named in "expected X, found Y" messages. */
export function describeToken(t: Token): string {
  switch (t.kind) {
    case "eof":
      return "end of input";
    case "ident":
      return `identifier '${t.text}'`;
    case "int":
      return `integer ${t.text}`;
    case "string":
      return "string literal";
    default:
      return `'${t.text}'`;
  }
}
