// Origins as the frames take them (docs/frames.md §4): exact scheme://host[:port], no path.

/** An exact http(s) origin (a trailing slash is dropped), or an error naming `what`. */
export function originOf(v: string, what: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new Error(`${what}: ${JSON.stringify(v.slice(0, 200))} is not a URL`);
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.origin !== v.replace(/\/$/, "")) {
    throw new Error(`${what}: ${JSON.stringify(v.slice(0, 200))} must be scheme://host[:port] with nothing after it`);
  }
  return u.origin;
}
