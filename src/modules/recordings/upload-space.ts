import type { Deps } from "../../deps";
import { insufficientStorage } from "../../http/errors";
import { applianceVolumes } from "../../storage";
import { measureVolume } from "../../storage/volumes";

const MB = 1024 * 1024;

/**
 * Refuses a new upload up front (507) while a volume it writes to has less than
 * PARLEY_MIN_FREE_MB free, or would have once `incomingBytes` landed, instead of filling
 * the disk to zero: the database, its WAL and the jobs that follow need room too.
 */
export function assertRoomForUpload(deps: Pick<Deps, "config">, incomingBytes = 0): void {
  const floor = deps.config.minFreeBytes;
  for (const volume of applianceVolumes(deps.config)) {
    const space = measureVolume(volume);
    // The bytes land on the audio volume (which is often the database's too, and then counts there).
    const incoming = volume.name === "audio" ? incomingBytes : 0;
    if (space && space.freeBytes - incoming < floor) {
      const free = Math.floor(space.freeBytes / MB);
      const upload = incoming ? ` for an upload of ${Math.ceil(incoming / MB)} MB` : "";
      throw insufficientStorage(volume.name, `The appliance's ${volume.name} volume has ${free} MB free${upload} and keeps ${floor / MB} MB free (PARLEY_MIN_FREE_MB)`);
    }
  }
}
