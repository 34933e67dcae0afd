import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import type { Config } from "../../config";
import { lockDataDir } from "../../data-dir/lock";
import { rewrapDataKeys } from "./data-keys";
import { loadMasterKey, type MasterKey, readMasterKeyFile, writeNewMasterKeyFile } from "./master-key";

/**
 * `parley keys rotate-master --new-key-file PATH` (decision 105): every project's data key
 * re-wrapped from the configured master key to the one in PATH (made there, random, when
 * PATH does not exist), in one transaction; no audio is read or rewritten. The server must
 * be stopped (the data dir's lock is taken), since it holds the old master key in memory;
 * start it again with PARLEY_MASTER_KEY_FILE=PATH.
 */
export function rotateMasterKey(db: Database, config: Config, serverSecret: string, newKeyFile: string, now: Date): { from: MasterKey; to: MasterKey; rewrapped: number } {
  const lock = lockDataDir(config.dataDir, now);
  try {
    const from = loadMasterKey(config.masterKeyFile, serverSecret);
    const to = existsSync(newKeyFile) ? readMasterKeyFile(newKeyFile) : writeNewMasterKeyFile(newKeyFile);
    return { from, to, rewrapped: rewrapDataKeys(db, from, to) };
  } finally {
    lock.release();
  }
}
