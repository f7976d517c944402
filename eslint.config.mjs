// ESLint: rules that catch defects, none about layout (Prettier owns that). docs/testing.md §3.1
// says why, which rules and how long a run takes.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

const ts = "**/*.{ts,tsx,mts,cts}";

// The JavaScript no tsconfig includes (Node scripts and workers): no type information, so only
// the untyped rules. `no-undef` needs Node's globals: read them from the Node running ESLint.
const untypedJs = ["**/*.{js,mjs,cjs}"];
// lib/'s entry points (client.mjs, webhooks.mjs…) are shadowed by their hand-written .d.mts
// in tsconfig.lib.json, so they stay untyped too.
const libTyped = ["lib/*/src/**/*.{mjs,ts}", "lib/**/*.d.mts", "examples/webhook-receiver.mjs"];
const nodeGlobals = Object.fromEntries(Object.getOwnPropertyNames(globalThis).map((name) => [name, "readonly"]));

const unsafeAny = [
  "@typescript-eslint/no-unsafe-argument",
  "@typescript-eslint/no-unsafe-assignment",
  "@typescript-eslint/no-unsafe-call",
  "@typescript-eslint/no-unsafe-member-access",
  "@typescript-eslint/no-unsafe-return",
];
const off = (rules) => Object.fromEntries(rules.map((rule) => [rule, "off"]));

export default defineConfig(
  { ignores: ["dist/", "**/fixtures/", "**/vectors/", "examples/export-page/main.js"] },
  js.configs.recommended,
  {
    languageOptions: { globals: nodeGlobals },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: { eqeqeq: ["error", "always", { null: "ignore" }] },
  },
  {
    files: [ts, ...libTyped],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      // Each file's nearest tsconfig.json: the root one (src, test, bench, scripts) and the examples' own.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A floating promise is an unhandled rejection waiting to crash the process. node:test's
      // it/describe return promises the runner itself awaits.
      "@typescript-eslint/no-floating-promises": [
        "error",
        { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["it", "describe", "test", "suite"] }] },
      ],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { args: "after-used", argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      // An async function without await is often an interface's shape (a handler, a store method).
      "@typescript-eslint/require-await": "off",
      // Our objects are closures behind interfaces that spell their functions as methods
      // (`wake(): void`): all 30 findings were such, none a class method losing its `this`.
      "@typescript-eslint/unbound-method": "off",
      // `let [n, at] = …` where only `at` changes.
      "prefer-const": ["error", { destructuring: "all" }],
      // Taste, not defects: a redundant `!` or `as`, and `throw new Error(…)` in a catch without `cause`.
      "@typescript-eslint/no-unnecessary-type-assertion": "off",
      "preserve-caught-error": "off",
    },
  },
  {
    // lib/ is JavaScript checked through its JSDoc by tsconfig.lib.json, which the project
    // service (it looks for tsconfig.json files) does not find.
    files: [...libTyped],
    languageOptions: { parserOptions: { projectService: false, project: "./tsconfig.lib.json" } },
  },
  {
    files: untypedJs,
    ignores: libTyped,
    rules: { "no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }] },
  },
  {
    // Tests, benchmarks and scripts read JSON answers and third-party objects as they come:
    // an `any` there fails the test or the run, not a request. `no-explicit-any` stays on.
    files: ["test/**", "bench/**", "scripts/**", "examples/**", "lib/**"],
    rules: off(unsafeAny),
  },
  {
    // A test's or a benchmark's message shows whatever came back, as String() has it.
    files: ["test/**", "bench/**"],
    rules: { "@typescript-eslint/no-base-to-string": "off" },
  },
  {
    // The check that lib/'s declarations and implementation export the same names unions two
    // key sets that are, when it passes, the same.
    files: ["lib/*/src/public-api.check.ts"],
    rules: { "@typescript-eslint/no-duplicate-type-constituents": "off" },
  },
  {
    // The console's pages read the API's JSON answers as `Json` (a record of `any`, src/console/browser/api.ts),
    // shown as text or passed back in the next request; src/ elsewhere holds to the no-unsafe-* rules.
    files: ["src/console/browser/**"],
    rules: off(unsafeAny),
  },
);
