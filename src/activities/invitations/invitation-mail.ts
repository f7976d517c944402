// The invitation mail (docs/invitations.md §3). Like an end user's OTP message
// (docs/otp-limits-and-mail.md §3.2–3.3) it carries no words the requester chose: not the
// receiver's name, not the inviting organization's name (a tenant picks both), only the app's
// name (the top-level organization's), the invitation id and the token. The token comes first
// on its own line so nothing else reads as the code. The token is inside `text`/`html`: the
// message is never logged.
import type { OtpMessage } from "../../logins/settings.ts";

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

export function invitationMessage(f: {
  to: string;
  appName: string;
  invitationId: string;
  token: string;
  expiresInHours: number;
}): OtpMessage {
  const text = [
    f.token,
    "",
    `This is your invitation code for ${f.appName} (invitation ${f.invitationId}). It expires in ${f.expiresInHours} hours and works once.`,
    "Give it only to the app you were invited to, when you accept the invitation.",
    "",
    "If you did not expect an invitation, ignore this message.",
    "",
  ].join("\n");
  const app = escapeHtml(f.appName);
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<p>Your invitation code for ${app}:</p>`,
    `<p style="font-size:20px;font-family:monospace;font-weight:bold">${escapeHtml(f.token)}</p>`,
    `<p>Invitation ${escapeHtml(f.invitationId)}. It expires in ${f.expiresInHours} hours and works once.</p>`,
    "<p>If you did not expect an invitation, ignore this message.</p>",
    "</body></html>",
  ].join("\n");
  return { channel: "email", to: f.to, subject: `Your invitation to ${f.appName}`, text, html };
}
