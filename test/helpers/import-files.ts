// Runs several test files in one process, one after another (docs/testing.md §4): each is
// imported in turn and keeps its own top-level suites, as when run alone. A file that does not
// even load fails as `<file> loads`, and the others still run.
import { it } from "node:test";
import path from "node:path";
import { pathToFileURL } from "node:url";

export async function importEach(files: readonly string[]): Promise<void> {
  for (const f of files) {
    try {
      await import(pathToFileURL(f).href);
    } catch (err) {
      it(`${path.relative(process.cwd(), f)} loads`, () => {
        throw err;
      });
    }
  }
}
