// Whose words an OTP message carries (docs/otp-limits-and-mail.md §3). Mail and SMS go out
// through the operator's accounts in the name of an app: the app's backend is the top-level
// organization of the tree. So:
//   - a request signed by a credential of a top-level organization (the app's backend, also
//     when it acts in one of its sub-organizations) may customize the message, with From and
//     Reply-To only in the domains the operator allows (SIGIL_MAIL_SENDER_DOMAINS);
//   - a request signed by a credential of a sub-organization (an end user, root of their own
//     sub-organization) may not: every customization field is refused (400 naming it), and
//     its appName is accepted (the SDK requires it) but never shown: the message names the
//     top-level organization's app.
import { invalid, type FieldViolation } from "../../errors.ts";
import { addressOf } from "../../logins/otp/transports/smtp.ts";
import type { LoginSettings } from "../../logins/settings.ts";
import { organizationChain } from "../../store/organizations.ts";
import type { ExecuteContext } from "../define.ts";
import type { InitOtpParams } from "./otp-fields.ts";

/** Every field of init_otp V1–V3 (SDK types v1InitOtpIntent*, v1EmailCustomizationParams*, v1SmsCustomizationParams) that shapes the message, besides appName. */
const CUSTOMIZATION: readonly [string, (p: InitOtpParams) => unknown][] = [
  ["parameters.sendFromEmailAddress", (p) => p.sendFromEmailAddress],
  ["parameters.sendFromEmailSenderName", (p) => p.sendFromEmailSenderName],
  ["parameters.replyToEmailAddress", (p) => p.replyToEmailAddress],
  ["parameters.emailCustomization.logoUrl", (p) => p.emailCustomization?.logoUrl],
  ["parameters.emailCustomization.magicLinkTemplate", (p) => p.emailCustomization?.magicLinkTemplate],
  ["parameters.emailCustomization.templateVariables", (p) => p.emailCustomization?.templateVariables],
  ["parameters.emailCustomization.templateId", (p) => p.emailCustomization?.templateId],
  ["parameters.smsCustomization.template", (p) => p.smsCustomization?.template],
];

const given = (v: unknown) => v !== undefined && v !== null && v !== "";

/** Domains From and Reply-To may use: SIGIL_MAIL_SENDER_DOMAINS, else the domain of the operator's default sender. */
export function allowedSenderDomains(logins: LoginSettings): readonly string[] {
  if (logins.mailSenderDomains) return logins.mailSenderDomains;
  const from = logins.email?.defaultFrom;
  if (!from) return [];
  const address = addressOf(from);
  const at = address.lastIndexOf("@");
  return at > 0 ? [address.slice(at + 1).toLowerCase()] : [];
}

/**
 * Throws 400 naming each From / Reply-To address (field name, value; absent ones skipped) whose
 * domain is not one the operator allows (docs/otp-limits-and-mail.md §3.4). init_otp checks its
 * own fields; the auth proxy's configuration activities check the addresses the proxy will
 * later send in every end user's init_otp (docs/auth-proxy.md §2.3).
 */
export function requireSenderDomains(logins: LoginSettings, addresses: readonly (readonly [string, string | null | undefined])[]): void {
  const domains = allowedSenderDomains(logins);
  const violations: FieldViolation[] = [];
  for (const [field, value] of addresses) {
    if (!given(value)) continue;
    const domain = value!.slice(value!.lastIndexOf("@") + 1).toLowerCase();
    if (!domains.includes(domain)) {
      violations.push({
        field,
        description: domains.length
          ? `must be an address in ${domains.join(", ")} (SIGIL_MAIL_SENDER_DOMAINS)`
          : "no sender domain is allowed on this server (SIGIL_MAIL_SENDER_DOMAINS)",
      });
    }
  }
  if (violations.length) {
    throw invalid(`${violations.map((v) => v.field).join(", ")}: ${violations[0]!.description}`, violations);
  }
}

export interface MessageContent {
  /** The app the message names (undefined: none, V1 without an app name from the backend). */
  appName: string | undefined;
  /** The request's customization, when the signer may customize; otherwise none is used. */
  custom: boolean;
  /** The tree's top-level organization: whose send quota the message counts against. */
  topOrganizationId: string;
}

/** Decides whose content the message carries, or throws 400 naming the refused fields. */
export async function messageContent(ctx: ExecuteContext, p: InitOtpParams): Promise<MessageContent> {
  const chain = await organizationChain(ctx.tx, ctx.organization.id, ctx.chains);
  const topOrganizationId = chain[chain.length - 1] ?? ctx.organization.id;
  const requested = "appName" in p && p.appName ? p.appName : (p.emailCustomization as { appName?: string } | undefined)?.appName;

  if (ctx.actor.organizationId === topOrganizationId) {
    // The app's backend: its own words, its From and Reply-To within the operator's domains.
    requireSenderDomains(ctx.services.logins, [
      ["parameters.sendFromEmailAddress", p.sendFromEmailAddress],
      ["parameters.replyToEmailAddress", p.replyToEmailAddress],
    ]);
    return { appName: requested, custom: true, topOrganizationId };
  }

  // An end user's sub-organization: no customization; the top-level organization's app.
  const refused = CUSTOMIZATION.filter(([, read]) => given(read(p))).map(([field]) => field);
  if (refused.length) {
    const description =
      "a sub-organization's credential may not customize OTP messages; they carry the app's (top-level organization's) content";
    throw invalid(
      `${refused.join(", ")}: ${description}`,
      refused.map((field) => ({ field, description })),
    );
  }
  const top = await ctx.tx.selectFrom("organizations").select("name").where("id", "=", topOrganizationId).executeTakeFirst();
  return { appName: top?.name, custom: false, topOrganizationId };
}
