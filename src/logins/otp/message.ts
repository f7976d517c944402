// The OTP message itself, built from init_otp's customization fields. The text part starts
// with the code on its own line, so nothing that looks like a code (an app name or a date
// with digits) comes before it: mail clients and people read the first such run as the code.
// The code is inside `text`/`html`: these messages are never logged (except by the explicit
// development transport).
import type { OtpMessage } from "../settings.ts";

export interface EmailCustomization {
  logoUrl?: string;
  /** A URL with `%s`, replaced by the code (a magic-link button). */
  magicLinkTemplate?: string;
  /**
   * For upstream-hosted custom templates: validated (a JSON object) and otherwise ignored,
   * like templateId — this server has one built-in template (docs/otp-limits-and-mail.md §3.4).
   */
  templateVariables?: string;
  templateId?: string;
}

export interface EmailFields {
  contact: string;
  /** Absent only for INIT_OTP (V1) without emailCustomization.appName. */
  appName?: string;
  code: string;
  expiresInSeconds: number;
  sendFromEmailAddress?: string;
  sendFromEmailSenderName?: string;
  replyToEmailAddress?: string;
  emailCustomization?: EmailCustomization;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function minutes(seconds: number): string {
  const m = Math.max(1, Math.round(seconds / 60));
  return m === 1 ? "1 minute" : `${m} minutes`;
}

export function emailMessage(f: EmailFields): OtpMessage {
  const c = f.emailCustomization ?? {};
  const link = c.magicLinkTemplate ? c.magicLinkTemplate.split("%s").join(encodeURIComponent(f.code)) : undefined;
  const text = [
    f.code,
    "",
    `This is your verification code${f.appName ? ` for ${f.appName}` : ""}. It expires in ${minutes(f.expiresInSeconds)}.`,
    ...(link ? ["", `Or open this link: ${link}`] : []),
    "",
    "If you did not ask for it, ignore this message.",
    "",
  ].join("\n");
  const app = f.appName ? escapeHtml(f.appName) : "";
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    ...(c.logoUrl ? [`<p><img src="${escapeHtml(c.logoUrl)}" alt="${app || "logo"}" style="max-width:340px;max-height:124px"></p>`] : []),
    `<p>Your verification code${app ? ` for ${app}` : ""}:</p>`,
    `<p style="font-size:28px;letter-spacing:4px;font-weight:bold">${escapeHtml(f.code)}</p>`,
    `<p>It expires in ${minutes(f.expiresInSeconds)}.</p>`,
    ...(link ? [`<p><a href="${escapeHtml(link)}">Sign in${app ? ` to ${app}` : ""}</a></p>`] : []),
    "<p>If you did not ask for it, ignore this message.</p>",
    "</body></html>",
  ].join("\n");
  return {
    channel: "email",
    to: f.contact,
    subject: f.appName ? `Your ${f.appName} verification code` : "Your verification code",
    text,
    html,
    ...(f.sendFromEmailAddress ? { from: f.sendFromEmailAddress } : {}),
    ...(f.sendFromEmailSenderName ? { fromName: f.sendFromEmailSenderName } : f.sendFromEmailAddress ? { fromName: "Notifications" } : {}),
    ...(f.replyToEmailAddress ? { replyTo: f.replyToEmailAddress } : {}),
  };
}

/** The placeholder smsCustomization.template carries (Go template syntax upstream). */
export const SMS_CODE_PLACEHOLDER = /\{\{\s*\.OtpCode\s*\}\}/g;

export function smsMessage(f: { contact: string; appName?: string; code: string; template?: string }): OtpMessage {
  const text = f.template
    ? f.template.replace(SMS_CODE_PLACEHOLDER, f.code)
    : `${f.code} is your ${f.appName ? `${f.appName} ` : ""}verification code.`;
  return { channel: "sms", to: f.contact, text };
}
