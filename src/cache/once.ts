// A value made once per process on first use, where a failed attempt is not kept: the next caller
// tries again (the console's and the frames' in-memory builds, docs/console.md §2).

/** `make` runs at the first call; its promise is shared until it rejects, then made again. */
export function onceRetrying<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () =>
    (made ??= make().catch((err: unknown) => {
      made = undefined;
      throw err;
    }));
}
