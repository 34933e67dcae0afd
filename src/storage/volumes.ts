import { statfsSync } from "node:fs";
import { dirname } from "node:path";

/** A volume Parley writes to, by the role a reader knows it by. */
export type Volume = { name: "database" | "audio"; path: string };
export type VolumeSpace = Volume & { freeBytes: number; totalBytes: number };

/**
 * Free (usable by this process) and total bytes of the volume holding `volume.path`, or of
 * its nearest existing parent (a folder made by the first write); null when none can be read.
 */
export function measureVolume(volume: Volume): VolumeSpace | null {
  for (let path = volume.path; ; path = dirname(path)) {
    try {
      const s = statfsSync(path);
      return { ...volume, freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
    } catch {
      if (dirname(path) === path) return null;
    }
  }
}

/** A write failed because its volume is full; `volume` names it for the operator and the client. */
export class OutOfSpaceError extends Error {
  constructor(
    readonly volume: Volume["name"],
    cause?: unknown,
  ) {
    super(`the ${volume} volume is full`, { cause });
  }
}

/** ENOSPC or EDQUOT from the file system, SQLITE_FULL from SQLite: the disk is at fault, not the request or the job. */
export function isOutOfSpace(err: unknown): boolean {
  if (err instanceof OutOfSpaceError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL";
}

/** The volume a disk-full error was raised on: SQLite's is the database's; file-system errors not named otherwise are audio's. */
export function volumeOf(err: unknown): Volume["name"] {
  if (err instanceof OutOfSpaceError) return err.volume;
  return (err as { code?: unknown } | null)?.code === "SQLITE_FULL" ? "database" : "audio";
}

/** Free space of each volume, and whether it is below the floor new uploads need: for /healthz and `parley doctor`. */
export function spaceReport(volumes: Volume[], minFreeBytes: number): { volume: Volume["name"]; free_bytes: number; total_bytes: number; low: boolean }[] {
  return volumes.flatMap((v) => {
    const space = measureVolume(v);
    return space ? [{ volume: v.name, free_bytes: space.freeBytes, total_bytes: space.totalBytes, low: space.freeBytes < minFreeBytes }] : [];
  });
}
