import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

/**
 * The server secret: PARLEY_SECRET if set, else a random one kept in the data
 * directory (created once, mode 0600), so a restart can still read what it encrypted.
 */
export function loadServerSecret(dataDir: string, configured?: string): string {
  if (configured) return configured;
  const path = join(dataDir, "secret.key");
  if (!existsSync(path)) writeFileSync(path, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" });
  return readFileSync(path, "utf8").trim();
}
