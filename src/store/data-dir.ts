// The data directory holds the master key (when SIGIL_MASTER_KEY is not set) and the SQLite
// files: nobody but the service's own OS user may read them — in particular not a TVC replica,
// which runs as another user when the service is root (docs/tvc-isolation.md §4). The modes are
// set when the files are made and set again on every start, so a directory or file that exists
// with looser modes (an older version, a copy, a restore) is tightened.
import fs from "node:fs";

/** The directory exists and is 0700 (made so, or tightened). */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
}

/** Each of the files that exists is 0600. */
export function restrictFiles(...files: string[]): void {
  for (const f of files) {
    try {
      fs.chmodSync(f, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
}

/**
 * Makes a missing file empty with mode 0600 before a library (SQLite) creates it with the
 * umask's mode; SQLite gives its -wal and -shm files the database file's mode.
 */
export function createPrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, "a", 0o600));
  restrictFiles(file);
}
