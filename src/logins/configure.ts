// The login settings `sigil serve` runs with, from its configuration: each login method
// builds its part from its own knobs (LOGIN_METHODS, docs/logins.md §8).
import type { LoginSettings, Logger } from "./settings.ts";
import { LOGIN_METHODS, type LoginSettingsParts } from "./index.ts";

type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/**
 * What the loop below reads of the configuration: every method's knobs, and the API port.
 * Named from LOGIN_METHODS rather than src/config.ts's Config, which gathers these knobs and so
 * sits above this module (docs/layers.md §1); a Config is one.
 */
export type LoginConfig = Intersection<Parameters<(typeof LOGIN_METHODS)[number]["settings"]>[0]> & { port: number };

export function loginSettingsFrom(config: LoginConfig, log: Logger): LoginSettings {
  const env = { port: config.port, log };
  const out: Record<string, unknown> = {};
  for (const method of LOGIN_METHODS) {
    for (const [field, value] of Object.entries(method.settings(config, env))) {
      // Two methods writing one field would depend on the list's order: a programming error.
      if (Object.hasOwn(out, field))
        throw new Error(`login methods: LoginSettings.${field} is built by two methods (the second is ${method.name})`);
      out[field] = value;
    }
  }
  // The one place the loop meets its type: each field was written by the method whose
  // settings type declares it, and together they declare every field LoginSettings requires
  // (a method dropped from the list fails to compile here).
  const parts = out as LoginSettingsParts;
  return parts;
}
