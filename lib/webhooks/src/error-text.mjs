// @ts-check

/**
 * An error as one line of text, with the network error code node's fetch hides in `cause`
 * (ECONNREFUSED, ENOTFOUND, ...) since that is what tells a receiver's operator what is wrong.
 * @param {unknown} e
 * @returns {string}
 */
export function errorText(e) {
  if (e instanceof Error) {
    const cause = /** @type {{ cause?: unknown }} */ (e).cause;
    const code =
      cause !== null && typeof cause === "object"
        ? (/** @type {{ code?: unknown, message?: unknown }} */ (cause).code ?? /** @type {{ message?: unknown }} */ (cause).message)
        : undefined;
    // eslint-disable-next-line @typescript-eslint/no-base-to-string, @typescript-eslint/restrict-template-expressions -- a driver's code or message, whatever its type
    return code ? `${e.message} (${code})` : e.message;
  }
  return String(e);
}
