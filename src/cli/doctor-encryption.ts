import type { Config } from "../config";
import type { Check } from "./doctor";

/**
 * `parley doctor` on encryption at rest (decision 105): where the master key comes from, and
 * a warning when it sits in the data dir beside the audio it protects (then a stolen disk,
 * or a backup, holds both: only S3 objects are protected without their database).
 */
export function encryptionCheck(config: Pick<Config, "masterKeyFile" | "secret">): Check {
  const sealed = "audio sealed with AES-256-GCM under per-project data keys";
  if (config.masterKeyFile) return { check: "encryption at rest", ok: true, detail: `${sealed}; master key from PARLEY_MASTER_KEY_FILE ${config.masterKeyFile} (keep it off the data disk and out of backups)` };
  if (config.secret) return { check: "encryption at rest", ok: true, detail: `${sealed}; master key derived from PARLEY_SECRET (keep it out of the data dir and backups)` };
  return {
    check: "encryption at rest",
    ok: true,
    warning: true,
    detail: `${sealed}, but the master key is derived from secret.key in the data dir, beside the audio it protects; for a disk or backup that reveals nothing alone: parley keys rotate-master --new-key-file PATH on another medium, then PARLEY_MASTER_KEY_FILE=PATH`,
  };
}
