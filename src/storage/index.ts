import { join } from "node:path";
import type { Config } from "../config";
import { LocalStorage } from "./local";
import { S3Storage } from "./s3";
import type { Storage } from "./storage";

export type { ByteRange, Storage, WriteResult } from "./storage";
export { chunksOf, ObjectTooLargeError } from "./storage";

/** S3 when PARLEY_S3_BUCKET is set, else files under <dataDir>/audio. */
export function createStorage(config: Config): Storage {
  return config.s3 ? new S3Storage(config.s3) : new LocalStorage(join(config.dataDir, "audio"));
}
