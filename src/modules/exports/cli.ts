import { readFileSync } from "node:fs";
import { parseFlags, UsageError } from "../../cli/args";
import { verifyArchive } from "./verify";

const USAGE = "usage: parley export verify ARCHIVE [--passphrase-file PATH]";

/** `parley export verify ARCHIVE`: exit 1 naming the first file that does not match the manifest. Needs no database: a court's expert can run it. */
export function exportCommand(args: string[]): void {
  const { values, positionals } = parseFlags(args, { "passphrase-file": { type: "string" } });
  if (positionals[0] !== "verify" || !positionals[1] || positionals.length > 2) throw new UsageError(USAGE);
  const passphraseFile = values["passphrase-file"];
  const passphrase = typeof passphraseFile === "string" ? readFileSync(passphraseFile, "utf8").replace(/\r?\n$/, "") : undefined;
  const verdict = verifyArchive(readFileSync(positionals[1]), passphrase);
  if (verdict.ok) {
    console.log(`export ${verdict.exportId} verified: ${verdict.files} files match manifest.json`);
    return;
  }
  console.error(`export verification failed: ${verdict.problem}`);
  process.exitCode = 1;
}
