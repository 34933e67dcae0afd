import { join } from "node:path";
import type { Config } from "../config";
import { LocalStorage } from "./local";
import { S3Storage } from "./s3";
import type { Scratch } from "./scratch";
import type { Storage } from "./storage";
import type { Volume } from "./volumes";

export type { ByteRange, Storage, WriteResult } from "./storage";
export { chunksOf, ObjectTooLargeError } from "./storage";

/** Where audio lives on this machine: <dataDir>/audio, or nowhere local when it goes to S3. */
function localAudioRoot(config: Pick<Config, "dataDir" | "s3">): string | null {
  return config.s3 ? null : join(config.dataDir, "audio");
}

/** S3 when PARLEY_S3_BUCKET is set, else files under <dataDir>/audio; an S3 object's local copies go to `scratch`. */
export function createStorage(config: Config, scratch: Scratch): Storage {
  const root = localAudioRoot(config);
  return root ? new LocalStorage(root) : new S3Storage(config.s3!, scratch);
}

/** The local volumes the appliance writes to: the data dir (database, WAL, temp files) and the audio store when it is local. They may be one volume. */
export function applianceVolumes(config: Pick<Config, "dataDir" | "s3">): Volume[] {
  const audio = localAudioRoot(config);
  return [{ name: "database", path: config.dataDir }, ...(audio ? [{ name: "audio" as const, path: audio }] : [])];
}
