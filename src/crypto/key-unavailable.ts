// The key-encryption key cannot be reached right now (a PKCS#11 token that does not answer, or
// answers that it is gone): the operation needing a secret is answered 503 UNAVAILABLE and
// records nothing; everything else goes on (docs/custody.md §3).

export class KeyUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "KeyUnavailableError";
  }
}

/** Whether `err`, or an error it wraps, says the key-encryption key is away. */
export function isKeyUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) {
    if (e instanceof KeyUnavailableError) return true;
    if (e instanceof AggregateError && e.errors.some((x) => isKeyUnavailable(x))) return true;
  }
  return false;
}
