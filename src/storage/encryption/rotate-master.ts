import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import type { Config } from "../../config";
import { rewrapDataKeys } from "./data-keys";
import { loadMasterKey, type MasterKey, readMasterKeyFile, writeNewMasterKeyFile } from "./master-key";

/**
 * `parley keys rotate-master --new-key-file PATH` (decision 105): every project's data key
 * re-wrapped from the configured master key to the one in PATH (made there, random, when
 * PATH does not exist), in one transaction; no audio is read or rewritten. The caller
 * holds the data dir's lock: a running server holds the old master key in memory.
 */
export function rotateMasterKey(
  db: Database,
  config: Pick<Config, "masterKeyFile">,
  serverSecret: string,
  newKeyFile: string,
): { from: MasterKey; to: MasterKey; rewrapped: number } {
  const from = loadMasterKey(config.masterKeyFile, serverSecret);
  const to = existsSync(newKeyFile) ? readMasterKeyFile(newKeyFile) : writeNewMasterKeyFile(newKeyFile);
  return { from, to, rewrapped: rewrapDataKeys(db, from, to) };
}
