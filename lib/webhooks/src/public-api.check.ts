// Type-level only (never imported at run time; checked by `tsc -p tsconfig.lib.json`): the
// hand-written declarations of @sigil/webhooks and what the JavaScript really exports must
// agree name for name and type for type. "../webhooks.mjs" resolves to its sibling .d.mts;
// "./index.mjs" has none, so its types are inferred from the JSDoc.
import type * as Declared from "../webhooks.mjs";
import type * as Implemented from "./index.mjs";

type D = typeof Declared;
type I = typeof Implemented;

/** Exact type equality (mutual assignability is too weak: it lets `any` through). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** The export names on which the two sides differ: missing on one side, or typed differently. */
type Disagreements = {
  [K in keyof D | keyof I]: K extends keyof D ? (K extends keyof I ? (Equals<D[K], I[K]> extends true ? never : K) : K) : K;
}[keyof D | keyof I];

// Fails to compile when the two disagree; the error message lists the exports concerned.
export const exportsAgree: [Disagreements] extends [never] ? true : { [K in Disagreements]: "declared and implemented differently" } = true;
