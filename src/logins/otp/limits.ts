// OTP limits that follow a contact or an organization tree rather than one code
// (docs/otp-limits-and-mail.md §2, §4): wrong guesses per contact, initiations per contact,
// messages per recipient and per organization tree. Each is a limit_slots scope
// (store/slots.ts): a slot per event held for the window, taken by one conditional upsert, so
// the limits hold under concurrent requests on PostgreSQL and a refused or failed request
// leaves nothing behind (its slot goes with the rollback).
import { exhausted } from "../../errors.ts";
import { nextFreeAt, takeSlot } from "../../store/slots.ts";
import type { Executor, OtpType } from "../../store/schema.ts";
import { DEFAULT_OTP_LIMITS, type LoginSettings, type OtpLimits } from "../settings.ts";

const HOUR_MS = 3600_000;

export function otpLimitsOf(logins: LoginSettings): OtpLimits {
  return logins.otpLimits ?? DEFAULT_OTP_LIMITS;
}

/**
 * The contact a code is for, as guess and initiation limits count it: the email address in
 * lower case, the E.164 number as given (checked) — in every organization
 * (docs/otp-limits-and-mail.md §4.1).
 */
export function contactKey(type: OtpType, contact: string): string {
  return type === "OTP_TYPE_SMS" ? `sms:${contact}` : `email:${contact.toLowerCase()}`;
}

/**
 * The mailbox or phone a message reaches, as send limits count it (docs/otp-limits-and-mail.md
 * §4.1): also without a `+tag`, and for Gmail without dots (googlemail.com is gmail.com), so
 * that victim+1@, victim+2@… share one count. Look-ups (users, verification tokens) keep
 * comparing the address as given.
 */
export function mailboxKey(type: OtpType, contact: string): string {
  if (type === "OTP_TYPE_SMS") return `sms:${contact}`;
  const at = contact.lastIndexOf("@");
  let local = contact.slice(0, at).toLowerCase();
  let domain = contact.slice(at + 1).toLowerCase();
  const plus = local.indexOf("+");
  if (plus > 0) local = local.slice(0, plus);
  if (domain === "googlemail.com") domain = "gmail.com";
  if (domain === "gmail.com") local = local.replace(/\./g, "");
  return `email:${local}@${domain}`;
}

function retrySeconds(at: number | undefined, now: number): number {
  return Math.max(1, Math.ceil(((at ?? now + 1000) - now) / 1000));
}

/** Takes a slot of `scope`, or throws 429 with Retry-After (when the earliest slot frees itself). */
async function takeOrRefuse(
  db: Executor,
  scope: string,
  limit: number,
  holder: string,
  windowMs: number,
  now: number,
  what: (seconds: number) => string,
): Promise<void> {
  if (await takeSlot(db, scope, limit, holder, now + windowMs, now)) return;
  const seconds = retrySeconds(await nextFreeAt(db, scope, now), now);
  throw exhausted(`${what(seconds)}`, seconds * 1000);
}

const minutes = (s: number) => (s % 60 === 0 ? `${s / 60} minute${s === 60 ? "" : "s"}` : `${s} second${s === 1 ? "" : "s"}`);

/** Scope of wrong guesses against codes for one contact, in every organization. */
export const guessScope = (key: string) => `otp-guess:${key}`;

/**
 * A code is about to be checked: it takes a guess slot for the window, or — the contact's
 * guesses being used up — the check is refused (429), the right code included. The caller
 * gives the slot back when the code was right (releaseSlots with the same holder).
 */
export async function takeGuess(db: Executor, logins: LoginSettings, key: string, holder: string, now: number): Promise<void> {
  const l = otpLimitsOf(logins);
  await takeOrRefuse(
    db,
    guessScope(key),
    l.guessesPerContact,
    holder,
    l.guessWindowSeconds * 1000,
    now,
    (s) =>
      `Too many invalid OTP codes for this contact (${l.guessesPerContact} per ${minutes(l.guessWindowSeconds)}); no code for it is accepted now; try again in ${s} seconds`,
  );
}

/** init_otp for a contact: at most initiationsPerContactPerHour, in every organization. */
export async function takeInitiation(db: Executor, logins: LoginSettings, key: string, holder: string, now: number): Promise<void> {
  const l = otpLimitsOf(logins);
  await takeOrRefuse(
    db,
    `otp-init:${key}`,
    l.initiationsPerContactPerHour,
    holder,
    HOUR_MS,
    now,
    (s) =>
      `Max number of OTPs have been initiated for this contact (${l.initiationsPerContactPerHour} per hour); try again in ${s} seconds`,
  );
}

/**
 * A message is about to go out through the operator's mail or SMS account: one slot per
 * recipient and one on the organization tree's top-level organization, so creating
 * sub-organizations does not multiply the quota (docs/otp-limits-and-mail.md §4.3).
 */
export async function takeSend(
  db: Executor,
  logins: LoginSettings,
  mailbox: string,
  topOrganizationId: string,
  holder: string,
  now: number,
): Promise<void> {
  const l = otpLimitsOf(logins);
  await takeOrRefuse(
    db,
    `send-recipient:${mailbox}`,
    l.sendsPerRecipientPerHour,
    holder,
    HOUR_MS,
    now,
    (s) => `Too many messages to this recipient (${l.sendsPerRecipientPerHour} per hour); try again in ${s} seconds`,
  );
  await takeOrRefuse(
    db,
    `send-organization:${topOrganizationId}`,
    l.sendsPerOrganizationPerHour,
    holder,
    HOUR_MS,
    now,
    (s) =>
      `Too many OTP messages for organization ${topOrganizationId} and its sub-organizations (${l.sendsPerOrganizationPerHour} per hour); try again in ${s} seconds`,
  );
}
