// Types of scripts/layers.mjs, for the tests that import it (test/unit/layers.test.ts).
export interface Layer {
  name: string;
  modules: string[];
  why: string;
  placed?: Record<string, string>;
}
export const LAYERS: Layer[];
export const EXCEPTIONS: { from: string; to: string; why: string }[];
export function layerOf(rel: string): number;
export function layerViolations(
  imports: { from: string; to: string; specifier: string }[],
  modules: string[],
  exceptions?: { from: string; to: string; why: string }[],
): string[];
