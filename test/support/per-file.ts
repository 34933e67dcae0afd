// What a test file opened (apps, temp dirs, server processes) is released when the file has
// ended. A shared helper cannot do this with a top-level afterAll: `bun test` evaluates a
// module once per run, so that hook belongs to the first file that imported it and ran after
// that file only, leaving every later file's apps running and temp dirs behind (decision 222).
// The preload releases a file's holdings just before the next file's first test, and the
// last file's after the run; `Bun.main` names the test file running now.

type Release = () => unknown;

const held: { file: string; release: Release }[] = [];

/** Has `release` run once the test file running now has ended, after the file's own hooks. */
export function releaseAfterFile(release: Release): void {
  held.push({ file: Bun.main, release });
}

/** Runs, newest first, the releases held for files other than `current` (every one without it). */
export async function releaseEndedFiles(current?: string): Promise<void> {
  for (let i = held.length - 1; i >= 0; i--) {
    const { file, release } = held[i]!;
    if (file === current) continue;
    held.splice(i, 1);
    await release();
  }
}
