// Which registration of a public key found *below* the target organization a stamp by that key
// logs in (docs/login-lookups.md §3). Pure: the rows come from the credential look-up
// (auth/api-key-stamp.ts), the clock and the window from the caller.
//
// create_api_keys, create_users and a sign-up forwarded by the auth proxy take any public key
// without proof of possession, and a wallet's public key is public. So a registration only
// counts when someone vouched for it or its holder used it:
//   1. trusted — written by the app's backend (a top-level organization's own credential
//      creating the sub-organization); oldest first;
//   2. proved — the key has stamped a request that resolved to this row; oldest first;
//   3. sole — neither, but the key is the only way into its organization (one user, no
//      contact, no other credential): only the key's holder can act there, so whoever made
//      it, it is the holder's; the newest wins (core signs a wallet up through the proxy and
//      logs it in straight after: the organization it just made);
//   4. fresh — none of these, but registered less than `freshMs` ago (a sign-up that gave
//      the organization another way in as well). Exactly one: it; two or more: nobody can
//      tell the owner's from a copy, so the login is refused;
// and older unproved, untrusted registrations are ineligible.

export interface KeyRegistration {
  id: string;
  /** When the row was written (api_keys.created_at; bigint may arrive as a string). */
  registered_at: number | string;
  /** 1 when the app's backend wrote it (api_keys.trusted). */
  trusted: number | boolean | null | undefined;
  /** When the key first stamped a request resolved to this row (api_keys.proved_at). */
  proved_at: number | string | null | undefined;
  /** True when the key is the only way into its organization (store isOnlyWayIn); read only for unproved, untrusted rows. */
  sole?: boolean;
}

export type Rank = "trusted" | "proved" | "sole" | "fresh" | "ineligible";

/** True when the rank cannot be told without knowing whether the key is its organization's only way in. */
export const needsSoleCheck = (r: KeyRegistration): boolean =>
  !(r.trusted === 1 || r.trusted === true) && (r.proved_at === null || r.proved_at === undefined);

export function rankOf(r: KeyRegistration, now: number, freshMs: number): Rank {
  if (r.trusted === 1 || r.trusted === true) return "trusted";
  if (r.proved_at !== null && r.proved_at !== undefined) return "proved";
  if (r.sole === true) return "sole";
  return now - Number(r.registered_at) < freshMs ? "fresh" : "ineligible";
}

export type Choice<R> = { kind: "one"; registration: R } | { kind: "none" } | { kind: "ambiguous"; count: number };

const older = <R extends KeyRegistration>(a: R, b: R): R => {
  const ta = Number(a.registered_at);
  const tb = Number(b.registered_at);
  return tb < ta || (tb === ta && b.id < a.id) ? b : a;
};

/** The registration below the target a stamp by this key resolves to (see above). */
export function chooseRegistration<R extends KeyRegistration>(below: readonly R[], now: number, freshMs: number): Choice<R> {
  const by: Record<Rank, R[]> = { trusted: [], proved: [], sole: [], fresh: [], ineligible: [] };
  for (const r of below) by[rankOf(r, now, freshMs)].push(r);
  for (const rank of ["trusted", "proved"] as const) {
    if (by[rank].length > 0) return { kind: "one", registration: by[rank].reduce(older) };
  }
  if (by.sole.length > 0) return { kind: "one", registration: by.sole.reduce((a, b) => (older(a, b) === a ? b : a)) };
  if (by.fresh.length === 1) return { kind: "one", registration: by.fresh[0]! };
  if (by.fresh.length > 1) return { kind: "ambiguous", count: by.fresh.length };
  return { kind: "none" };
}
