// Every login method the service offers (docs/logins.md §8): one folder each, one line here.
// The parent-stampable activity types (pipeline/parent-writes.ts), the login knobs of the
// configuration (src/config.ts) and the LoginSettings of `sigil serve`
// (logins/configure.ts) are read from this list.
import type { LoginMethod } from "./define.ts";
import { session } from "./session/index.ts";
import { otp } from "./otp/index.ts";
import { passkey } from "./passkey/index.ts";
import { oauth } from "./oauth/index.ts";
import { wallet } from "./wallet/index.ts";

/** In the order of their knobs in docs/configuration.md §1. */
export const LOGIN_METHODS = [session, otp, passkey, oauth, wallet] as const;

type Methods = (typeof LOGIN_METHODS)[number];
type KnobsOf<M> = M extends LoginMethod<string, infer K, infer _S> ? K[number] : never;
type SettingsOf<M> = M extends LoginMethod<string, infer _K, infer S> ? S : never;
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** One knob of a login method. */
export type LoginKnob = KnobsOf<Methods>;
/** What the methods' settings builders return together: LoginSettings, checked where it is assembled. */
export type LoginSettingsParts = Intersection<SettingsOf<Methods>>;

/** Every method's knobs, method by method: src/config.ts puts them in KNOBS. */
export const LOGIN_KNOBS: readonly LoginKnob[] = LOGIN_METHODS.flatMap((m): readonly LoginKnob[] => m.knobs);

/** Every activity-type pattern a parent's credential may submit, method by method. */
export const LOGIN_PARENT_PATTERNS: readonly RegExp[] = LOGIN_METHODS.flatMap((m) => m.parentPatterns);
