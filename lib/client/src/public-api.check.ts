// Type-level only (never imported at run time; checked by `tsc -p tsconfig.lib.json`): the
// hand-written declarations of @sigil/client and what the JavaScript really exports must
// agree name for name and type for type ("../client.mjs" resolves to its sibling .d.mts).
import type * as Declared from "../client.mjs";
import type * as Implemented from "./index.mjs";

type D = typeof Declared;
type I = typeof Implemented;

/** Exact type equality (mutual assignability is too weak: it lets `any` through). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

type Disagreements = {
  [K in keyof D | keyof I]: K extends keyof D ? (K extends keyof I ? (Equals<D[K], I[K]> extends true ? never : K) : K) : K;
}[keyof D | keyof I];

export const exportsAgree: [Disagreements] extends [never] ? true : { [K in Disagreements]: "declared and implemented differently" } = true;
