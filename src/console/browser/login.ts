/// <reference lib="dom" />
// The two ways in (docs/console.md §4): a pasted API key, or a passkey that registers a fresh
// session key with stamp_login. Either way the answer is the session and whoami's user.
import { Api, keyStamper } from "./api.ts";
import { loginWithApiKey, savePasskeySession, type Session } from "./credentials.ts";
import type { Me } from "./page.ts";
import { generateSessionKey, passkeyStamp } from "./stamps.ts";

export interface LoggedIn {
  session: Session;
  me: Me;
}

export const whoami = (session: Session): Promise<Me> => new Api(keyStamper(session.key)).query<Me>("whoami", session.organizationId);

export async function apiKeyLogin(organizationId: string, publicHex: string, privateHex: string): Promise<LoggedIn> {
  const session = await loginWithApiKey(organizationId, publicHex, privateHex);
  return { session, me: await whoami(session) };
}

/** The session JWT's exp (epoch ms), or 15 minutes from now when it cannot be read (the server's default, docs/logins.md §2.2). */
function expiryOf(jwt: unknown): number {
  try {
    const payload = String(jwt).split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/");
    const exp = Number((JSON.parse(atob(payload)) as { exp?: number }).exp);
    if (Number.isFinite(exp)) return exp * 1000;
  } catch {
    /* not a JWT we can read */
  }
  return Date.now() + 15 * 60_000;
}

/**
 * Passkey: one assertion stamps stamp_login (docs/stamps.md §3) naming the organization typed in —
 * the user's own or a parent of it, where a passkey is looked up below the target
 * (docs/stamps.md §5.2) — which registers a session key made here, non-extractable. whoami,
 * stamped with that key, then says whose it is.
 */
export async function passkeyLogin(organizationId: string): Promise<LoggedIn> {
  const key = await generateSessionKey();
  const activity = await new Api((body) => passkeyStamp(body)).submit("stamp_login", "ACTIVITY_TYPE_STAMP_LOGIN", organizationId, {
    publicKey: key.publicKey,
  });
  if (activity.status !== "ACTIVITY_STATUS_COMPLETED") throw new Error(`stamp_login ended ${String(activity.status)}`);
  const session: Session = { kind: "passkey", organizationId, key, expiresAt: expiryOf(activity.result?.stampLoginResult?.session) };
  const me = await whoami(session);
  // Later requests name the user's own organization.
  session.organizationId = me.organizationId;
  await savePasskeySession(session);
  return { session, me };
}
