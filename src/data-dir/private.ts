import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Permission bits of the group and of others: none of them for anything in the data dir. */
const NOT_OWNER = 0o077;

/**
 * Makes everything this process writes from now on private to its user, and the data dir
 * 0700 (tightened when it exists already). The data dir holds patient audio and
 * transcripts; under the usual umask 022 the database, the audio and every temp file would
 * be readable by any local user. The umask covers them all at once, also the WAL and SHM
 * files SQLite makes later and the temp files written outside the data dir (S3 downloads).
 */
export function keepDataPrivate(dataDir: string): void {
  process.umask(NOT_OWNER);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // A dir made by an earlier version, or by hand, is usually 0755. Without search
  // permission on it nobody else reaches the files inside, whatever their own modes.
  if ((statSync(dataDir).mode & NOT_OWNER) !== 0) chmodSync(dataDir, 0o700);
}

/** Paths under `dir` (relative to it, "." for itself) that its group or others may use; for `parley doctor`. */
export function findWiderThanPrivate(dir: string): string[] {
  return [".", ...readdirSync(dir, { recursive: true, encoding: "utf8" })].filter((name) => {
    // A file the running server removed meanwhile (a finished temp file) is no finding.
    const stat = lstatSync(join(dir, name), { throwIfNoEntry: false });
    return stat !== undefined && !stat.isSymbolicLink() && (stat.mode & NOT_OWNER) !== 0;
  });
}
