// The declaration of a login method (docs/logins.md §8). A method is one folder under
// src/logins/ (its manifest, knobs and mechanism) whose index.ts exports one
// defineLoginMethod({...}), and one entry in LOGIN_METHODS (src/logins/index.ts). Everything
// that used to be spread over the service is derived from that list: the activity types a
// parent organization's credential may submit (pipeline/parent-writes.ts PARENT_STAMPABLE), the
// login knobs of the configuration (src/config.ts KNOBS, docs/configuration.md §2) and the
// LoginSettings `sigil serve` runs with (logins/configure.ts). Like knobs (config/define.ts),
// the types are bound here: the knobs' Config fields and the part of LoginSettings the method
// builds.
import type { ConfigOf, Knob } from "../config/define.ts";
import type { LoginSettings, Logger } from "./settings.ts";

/**
 * An activity type a parent organization's credential may submit in a sub-organization for
 * this method (docs/request-path.md §5.2).
 */
export interface ParentStampableSpec {
  /** The whole type, without a version suffix: `ACTIVITY_TYPE_INIT_OTP`. */
  type: `ACTIVITY_TYPE_${string}`;
  /** Every version of the flow too (`_V<n>` suffixes); otherwise the type exactly. */
  everyVersion?: boolean;
  /**
   * An upstream type Sigil does not serve today, open to parents should it be served
   * (docs/logins.md §8.3 lists these). Every other entry must match a registered activity.
   */
  legacy?: boolean;
}

/** What a method's settings builder may use besides its own knobs. */
export interface LoginEnvironment {
  /** The API port (PORT): defaults derived from it, such as SIGIL_PUBLIC_URL. */
  port: number;
  log: Logger;
}

type AnyKnob = Knob<string, unknown>;

export interface LoginMethodSpec<N extends string, K extends readonly AnyKnob[], S extends Partial<LoginSettings>> {
  /** Short, unique, the folder's name. */
  name: N;
  /** Where the method is described: a docs section, cited as in code comments. */
  doc: `docs/${string} §${string}`;
  /**
   * The registered activity types the method runs on (they stay in src/activities and the
   * registry; this only names them). Several methods may run on one (stamp_login).
   */
  activities: readonly `ACTIVITY_TYPE_${string}`[];
  /** Its activity types a parent's credential may submit; no two methods claim one type. */
  parentStampable: readonly ParentStampableSpec[];
  /** Its configuration knobs, in the order of docs/configuration.md §1. */
  knobs: K;
  /** Its part of LoginSettings, from its own knobs (checked at `sigil serve` start). */
  settings: (config: ConfigOf<K>, env: LoginEnvironment) => S;
}

/** A defined login method: its spec, with the parent-stampable types compiled to patterns. */
export interface LoginMethod<
  N extends string = string,
  K extends readonly AnyKnob[] = readonly AnyKnob[],
  S extends Partial<LoginSettings> = Partial<LoginSettings>,
> extends LoginMethodSpec<N, K, S> {
  /** Anchored patterns over the whole type, one per parentStampable entry. */
  readonly parentPatterns: readonly RegExp[];
}

/** `ACTIVITY_TYPE_X` (and, with everyVersion, `ACTIVITY_TYPE_X_V<n>`), anchored. */
export function parentPattern(spec: ParentStampableSpec): RegExp {
  if (!/^ACTIVITY_TYPE_[A-Z0-9_]+$/.test(spec.type) || /_V\d+$/.test(spec.type))
    throw new Error(`parentStampable type ${spec.type}: an activity type without its version suffix`);
  return new RegExp(`^${spec.type}${spec.everyVersion ? "(_V\\d+)?" : ""}$`);
}

/** Declares a login method. */
export function defineLoginMethod<const N extends string, const K extends readonly AnyKnob[], S extends Partial<LoginSettings>>(
  spec: LoginMethodSpec<N, K, S>,
): LoginMethod<N, K, S> {
  return { ...spec, parentPatterns: spec.parentStampable.map(parentPattern) };
}
