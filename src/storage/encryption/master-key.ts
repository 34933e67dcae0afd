import { createHash, hkdfSync, randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { StartupError } from "../../startup-error";

/** The key that wraps every project's data key (decision 105); `id` names it without revealing it. */
export type MasterKey = { key: Buffer; id: string };

/** The master key cannot be had, or is not the one the data keys are wrapped with: the server must not start. */
export class MasterKeyError extends StartupError {}

function named(key: Buffer): MasterKey {
  return { key, id: `mk_${createHash("sha256").update("parley master key id").update(key).digest("hex").slice(0, 16)}` };
}

/** A master key file: 64 hex digits (what `parley keys rotate-master` writes), whitespace around them ignored. */
export function readMasterKeyFile(path: string): MasterKey {
  let text: string;
  try {
    text = readFileSync(path, "utf8").trim();
  } catch (err) {
    throw new MasterKeyError(`cannot read PARLEY_MASTER_KEY_FILE ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (!/^[0-9a-f]{64}$/i.test(text)) throw new MasterKeyError(`${path} must hold a 256-bit key as 64 hex digits (openssl rand -hex 32)`);
  return named(Buffer.from(text, "hex"));
}

/** A new random master key written to `path` (0600, which must not exist yet). */
export function writeNewMasterKeyFile(path: string): MasterKey {
  const key = randomBytes(32);
  writeFileSync(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  return named(key);
}

/** The master key derived from the server secret (PARLEY_SECRET or secret.key) when no key file is set. */
export function deriveMasterKey(serverSecret: string): MasterKey {
  return named(Buffer.from(hkdfSync("sha256", serverSecret, "parley", "parley master key v1", 32)));
}

/** The configured master key: PARLEY_MASTER_KEY_FILE, else derived from the server secret. */
export function loadMasterKey(file: string | undefined, serverSecret: string): MasterKey {
  return file ? readMasterKeyFile(file) : deriveMasterKey(serverSecret);
}
