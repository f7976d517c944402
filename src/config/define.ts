// The declaration of a configuration knob (docs/configuration.md §2). A knob is one entry in
// the list of src/config.ts, and everything else is derived from that list: the Config type
// (ConfigOf), the defaults (defaultsOf), the environment variables and `--flag`s loadConfig
// reads, which knobs are env-only, and the table of docs/configuration.md §1 (knobsTable).
// Like activities (activities/define.ts), the value type is bound here, at definition time:
// it is what `parse` returns, plus `undefined` when the default is `undefined`.

/** What a knob's row in docs/configuration.md §1 says besides its names. */
export interface KnobDoc {
  /** The Meaning column (Markdown, one line). */
  meaning: string;
  /**
   * The Default column (Markdown), as an operator would write the value: in the variable's
   * units (`300` seconds where the value is 300 000 ms), or what an unset knob means. When
   * omitted, it is the default value in backticks, or "—" when the default is `undefined`.
   * A text that starts with a value in backticks must parse to the default (test/unit/config-docs.test.ts).
   */
  default?: string;
}

interface KnobCommon<K extends string, T, D> {
  /** The environment variable; read when set and not empty. */
  env: string;
  /** The field of Config. */
  key: K;
  /** Text → value; throws with the variable's name on anything else (the message reaches the operator). */
  parse: (text: string) => T;
  /** The value when neither the environment nor a flag sets it. */
  default: D;
  /**
   * Where a value that depends on another knob, or on what happens at run time, is computed
   * when the knob is unset (its default is then `undefined`): a function and its module.
   * Keeping the rule at its consumer keeps Config what the operator set (docs/configuration.md §2).
   */
  computedBy?: string;
  doc: KnobDoc;
}

/**
 * A knob that may hold a secret is read from the environment only: command lines are visible
 * to every user of the machine through `ps`. Its `flag`, when named, is refused with that
 * reason; without one the command line is not looked at.
 */
type KnobNames = { flag: `--${string}`; secret?: false } | { secret: true; flag?: `--${string}` };

export type KnobSpec<K extends string, T, D> = KnobCommon<K, T, D> & KnobNames;

/** A defined knob: its spec, with the value type (`T`, or `T | undefined` for an unset default) fixed. */
export interface Knob<K extends string = string, V = unknown> {
  readonly env: string;
  readonly key: K;
  readonly parse: (text: string) => V;
  readonly default: V;
  /** The flag as named in the spec: read, or (for a secret) refused. */
  readonly flag: string | undefined;
  readonly secret: boolean;
  /** The flag loadConfig reads and the docs show; undefined for env-only knobs. */
  readonly cliFlag: string | undefined;
  readonly computedBy: string | undefined;
  readonly doc: KnobDoc;
}

/**
 * Declares a knob. `T` comes from `parse` alone (NoInfer keeps a default such as `[]` from
 * narrowing it); a knob whose default is `undefined` has the value type `T | undefined`.
 */
export function defineKnob<const K extends string, T>(spec: KnobSpec<K, T, undefined>): Knob<K, T | undefined>;
export function defineKnob<const K extends string, T>(spec: KnobSpec<K, T, NoInfer<T>>): Knob<K, T>;
export function defineKnob<K extends string, T>(spec: KnobSpec<K, T, T | undefined>): Knob<K, T | undefined> {
  const secret = spec.secret === true;
  return {
    env: spec.env,
    key: spec.key,
    parse: spec.parse,
    default: spec.default,
    flag: spec.flag,
    secret,
    cliFlag: secret ? undefined : spec.flag,
    computedBy: spec.computedBy,
    doc: spec.doc,
  };
}

// The Config of a list: each knob's key with its value type.
type AnyKnob = Knob<string, unknown>;
export type ConfigOf<L extends readonly AnyKnob[]> = {
  -readonly [N in L[number] as N["key"]]: N extends Knob<string, infer V> ? V : never;
};

/** Every knob's default, keyed by its field. */
export function defaultsOf<const L extends readonly AnyKnob[]>(knobs: L): ConfigOf<L> {
  const out: Record<string, unknown> = {};
  for (const k of knobs) out[k.key] = k.default;
  // The one place the loop over the list meets its type: each key was written with its own
  // knob's default, which is what ConfigOf says (a mapped type cannot follow a runtime loop).
  return out as ConfigOf<L>;
}

/**
 * Reads every knob from the environment and then from `argv` (a flag wins); `argv` may hold
 * other flags and positionals. Writes into `into`, which starts as the defaults.
 */
export function readKnobs<const L extends readonly AnyKnob[]>(
  knobs: L,
  into: ConfigOf<L>,
  env: NodeJS.ProcessEnv,
  argv: readonly string[],
): ConfigOf<L> {
  const out: Record<string, unknown> = into;
  for (const knob of knobs) {
    const fromEnv = env[knob.env];
    if (fromEnv !== undefined && fromEnv !== "") out[knob.key] = knob.parse(fromEnv);
    if (knob.flag === undefined) continue;
    const i = argv.indexOf(knob.flag);
    if (i < 0) continue;
    if (knob.secret) throw new Error(`${knob.flag}: ${knob.env} may hold a secret; set it in the environment, not on the command line`);
    const v = argv[i + 1];
    if (v === undefined) throw new Error(`${knob.flag} needs a value`);
    out[knob.key] = knob.parse(v);
  }
  return into;
}

/** The Default column of a knob's row. */
export function defaultText(knob: AnyKnob): string {
  if (knob.doc.default !== undefined) return knob.doc.default;
  if (knob.default === undefined) return "—";
  // A list or an object has no one spelling an operator would type: it needs its text.
  if (typeof knob.default === "object") throw new Error(`${knob.env}: a default that is not a single value needs doc.default`);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects were refused above: a string, number or boolean
  return "`" + String(knob.default) + "`";
}

/** The Markdown table of docs/configuration.md §1: one row per knob, in the list's order. */
export function knobsTable(knobs: readonly AnyKnob[]): string {
  for (const k of knobs) if (k.doc.meaning.includes("|")) throw new Error(`${k.env}: a "|" in doc.meaning would split its row`);
  const rows = knobs.map(
    (k) => `| \`${k.env}\` | ${k.cliFlag ? "`" + k.cliFlag + "`" : "(env only)"} | ${defaultText(k)} | ${k.doc.meaning} |`,
  );
  return ["| Variable | Flag | Default | Meaning |", "|---|---|---|---|", ...rows].join("\n");
}

// Parsers shared by knobs. Each names the variable in its error: the same message serves the
// environment and the flag.

export function int(name: string, min: number, max: number) {
  return (v: string): number => {
    if (!/^\d+$/.test(v)) throw new Error(`${name} must be an integer, got ${JSON.stringify(v)}`);
    const n = Number(v);
    if (n < min || n > max) throw new Error(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

/** An integer number of seconds, kept in milliseconds. */
export function secondsAsMs(name: string, min: number, max: number) {
  const seconds = int(name, min, max);
  return (v: string): number => seconds(v) * 1000;
}

export const str = (v: string): string => v;

/** Comma-separated, trimmed, empty entries dropped. */
export const list = (v: string): string[] =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

export function url(name: string, protocols: readonly string[]) {
  return (v: string): string => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      throw new Error(`${name} must be a URL`);
    }
    if (!protocols.includes(u.protocol)) throw new Error(`${name} must use ${protocols.join(" or ")}`);
    return v;
  };
}

export function bool(name: string) {
  return (v: string): boolean => {
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    throw new Error(`${name} must be true or false, got ${JSON.stringify(v)}`);
  };
}

/** `sigil serve --help`: each flag with its variable, then the variables read from the environment only. */
export function knobsUsage(knobs: readonly AnyKnob[]): string {
  const flagged = knobs.filter((k) => k.cliFlag !== undefined);
  const width = Math.max(...flagged.map((k) => k.cliFlag!.length)) + " <value>".length;
  return [
    ...flagged.map((k) => `  ${(k.cliFlag! + " <value>").padEnd(width)}  ${k.env}`),
    "",
    `Environment only (may hold a secret): ${knobs
      .filter((k) => k.cliFlag === undefined)
      .map((k) => k.env)
      .join(", ")}`,
  ].join("\n");
}
