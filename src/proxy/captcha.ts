// Captcha on sign-up and OTP initiation when a config asks for it (docs/auth-proxy-service.md
// §4.2): the browser's X-Captcha-Token is checked with a Turnstile-compatible siteverify
// endpoint (form fields secret, response, remoteip → JSON {success}). A verifier that cannot
// answer refuses the request (503); it never lets it through.
import { ApiError, Grpc, invalid, permissionDenied } from "../errors.ts";

export interface CaptchaSettings {
  verifyUrl: string | undefined;
  secret: string | undefined;
}

export const CAPTCHA_TIMEOUT_MS = 5_000;
/** Turnstile tokens are at most 2048 characters. */
export const MAX_CAPTCHA_TOKEN_LENGTH = 4096;

function verifierDown(why: string): ApiError {
  return new ApiError(Grpc.UNAVAILABLE, "UNSPECIFIED", `captcha verification is unavailable (${why}); retry later`);
}

/** Resolves when the token passes; throws 400 (missing), 403 (refused) or 503 (verifier unavailable). */
export async function verifyCaptcha(settings: CaptchaSettings, token: string | undefined, remoteIp: string | undefined): Promise<void> {
  if (token === undefined || token === "")
    throw invalid("X-Captcha-Token is required by this auth proxy configuration", [{ field: "X-Captcha-Token", description: "required" }]);
  if (token.length > MAX_CAPTCHA_TOKEN_LENGTH)
    throw invalid("X-Captcha-Token is too long", [
      { field: "X-Captcha-Token", description: `at most ${MAX_CAPTCHA_TOKEN_LENGTH} characters` },
    ]);
  if (!settings.verifyUrl || !settings.secret) throw verifierDown("this proxy has no SIGIL_CAPTCHA_VERIFY_URL and SIGIL_CAPTCHA_SECRET");
  const form = new URLSearchParams({ secret: settings.secret, response: token });
  if (remoteIp) form.set("remoteip", remoteIp);
  let res: Response;
  try {
    res = await fetch(settings.verifyUrl, {
      method: "POST",
      body: form,
      signal: AbortSignal.timeout(CAPTCHA_TIMEOUT_MS),
      redirect: "error",
    });
  } catch {
    throw verifierDown("the verifier did not answer");
  }
  if (res.status !== 200) throw verifierDown(`the verifier answered ${res.status}`);
  const j = (await res.json().catch(() => undefined)) as { success?: unknown } | undefined;
  if (!j || typeof j !== "object" || typeof j.success !== "boolean") throw verifierDown("the verifier's answer is not JSON {success}");
  if (!j.success) throw permissionDenied("captcha verification failed");
}
