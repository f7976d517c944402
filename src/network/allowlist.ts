// Deciding whether a client address may use a credential of an organization, from its IP
// allowlists (docs/network.md §2.3):
//   - no organization-level list, or one that is not enabled → every address may;
//   - the key's own list, when it has at least one rule, replaces the organization's rules;
//     a key list without rules falls back to them;
//   - enabled with zero rules (and no key rules) → no address may;
//   - the client address unknown or unreadable → the organization's onEvaluationError.
// Sub-organizations are never evaluated (the caller checks that the holder is a root).
import { contains, parseRange, type Address, type Range } from "./address.ts";
import type { OnEvaluationError, StoredList } from "../store/ip-allowlists.ts";
import { ORGANIZATION_LIST } from "../store/ip-allowlists.ts";

/** The broadest prefixes a rule may have. */
export const PREFIX_BOUNDS = { 4: 20, 6: 48 } as const;
/** Rules per list, per family. */
export const MAX_RULES_PER_FAMILY = 10;

export interface CompiledAllowlists {
  enabled: boolean;
  onEvaluationError: OnEvaluationError;
  ranges: readonly Range[];
  /** Key lists with at least one rule, by lower-case public key. */
  keys: ReadonlyMap<string, readonly Range[]>;
}

function ranges(list: StoredList): Range[] {
  const out: Range[] = [];
  for (const r of list.rules) {
    // Stored rules were normalised on the way in; parsing them again cannot fail.
    const range = parseRange(r.cidr);
    if (typeof range !== "string") out.push(range);
  }
  return out;
}

/** Compiles what readAllowlists returned (undefined: nothing to enforce). */
export function compileAllowlists(lists: readonly StoredList[]): CompiledAllowlists | undefined {
  const org = lists.find((l) => l.publicKey === ORGANIZATION_LIST);
  if (!org || !org.enabled) return undefined;
  const keys = new Map<string, Range[]>();
  for (const l of lists) {
    if (l.publicKey === ORGANIZATION_LIST) continue;
    const r = ranges(l);
    if (r.length > 0) keys.set(l.publicKey, r);
  }
  return { enabled: true, onEvaluationError: org.onEvaluationError, ranges: ranges(org), keys };
}

/** May `address` use the credential with `publicKey` (lower-case; undefined: not an API key)? */
export function admits(lists: CompiledAllowlists | undefined, publicKey: string | undefined, address: Address | undefined): boolean {
  if (!lists || !lists.enabled) return true;
  if (!address) return lists.onEvaluationError === "ALLOW";
  const rules = (publicKey !== undefined ? lists.keys.get(publicKey) : undefined) ?? lists.ranges;
  return rules.some((r) => contains(r, address));
}
