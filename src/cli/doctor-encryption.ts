import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config";
import { runningCli } from "../runtime/cli-name";
import { createStorage } from "../storage";
import { countPlaintextObjects } from "../storage/encryption/plaintext-objects";
import { Scratch, scratchRoot } from "../storage/scratch";
import type { Check } from "./doctor";

/**
 * `parley doctor` on encryption at rest (decision 105): where the master key comes from, and
 * a warning when it sits in the data dir beside the audio it protects (then a stolen disk,
 * or a backup, holds both: only S3 objects are protected without their database).
 */
export function encryptionCheck(config: Pick<Config, "masterKeyFile" | "secret">, cli = runningCli()): Check {
  const sealed = "audio sealed with AES-256-GCM under per-project data keys";
  if (config.masterKeyFile)
    return {
      check: "encryption at rest",
      ok: true,
      detail: `${sealed}; master key from PARLEY_MASTER_KEY_FILE ${config.masterKeyFile} (keep it off the data disk and out of backups)`,
    };
  if (config.secret)
    return { check: "encryption at rest", ok: true, detail: `${sealed}; master key derived from PARLEY_SECRET (keep it out of the data dir and backups)` };
  return {
    check: "encryption at rest",
    ok: true,
    warning: true,
    detail: `${sealed}, but the master key is derived from secret.key in the data dir, beside the audio it protects; for a disk or backup that reveals nothing alone: ${cli} keys rotate-master --new-key-file PATH on another medium, then PARLEY_MASTER_KEY_FILE=PATH`,
  };
}

/**
 * `parley doctor` on audio stored before encryption at rest: how many objects are still
 * plaintext. The server seals them in the background after each start (decision 107).
 */
export async function plaintextAudioCheck(config: Config): Promise<Check> {
  const check = "audio encrypted";
  // Not made by doctor: a LocalStorage would create the folder.
  if (!config.s3 && !existsSync(join(config.dataDir, "audio"))) return { check, ok: true, detail: "no audio stored yet" };
  try {
    const { plaintext, total } = await countPlaintextObjects(createStorage(config, new Scratch(scratchRoot(config.dataDir))));
    if (plaintext === 0) return { check, ok: true, detail: `all ${total} stored audio object(s) are sealed` };
    return {
      check,
      ok: true,
      warning: true,
      detail: `${plaintext} of ${total} stored audio object(s) are still plaintext (stored before encryption at rest); a running server seals them in the background after it starts`,
    };
  } catch (err) {
    return { check, ok: true, warning: true, detail: `cannot count the plaintext audio objects: ${(err as Error).message}` };
  }
}
