import { parseFlags, UsageError } from "./args";
import type { Config } from "../config";
import { BackupError } from "../data-dir/backup-files";
import { backupDataDir } from "../data-dir/backup";
import { restoreDataDir } from "../data-dir/restore";

const MB = 1024 * 1024;

/** A known failure is one line on stderr and exit 1; anything else is a bug and keeps its stack. */
async function reportFailure(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (!(err instanceof BackupError)) throw err;
    console.error(`error: ${err.message}`);
    process.exitCode = 1;
  }
}

/** `parley backup PATH [--json]`: safe while a server serves from the same data dir (decision 087). */
export async function backupCommand(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, { json: { type: "boolean" } });
  const [target] = positionals;
  if (!target || positionals.length > 1) throw new UsageError("usage: parley backup PATH [--json]   (PATH: a new or empty folder)");
  await reportFailure(async () => {
    const { path, manifest } = await backupDataDir(config, target, () => new Date());
    const bytes = manifest.files.reduce((sum, f) => sum + f.size, 0);
    if (values.json) console.log(JSON.stringify({ path, ...manifest }));
    else {
      console.log(`backed up ${config.dataDir} to ${path}: ${manifest.files.length} files, ${(bytes / MB).toFixed(1)} MB, SHA-256s in ${path}/manifest.json`);
      if (manifest.audio.storage === "s3") console.log(`note: database only; ${manifest.audio.note} (bucket ${manifest.audio.bucket})`);
      if (manifest.secret === "environment")
        console.log("note: the server secret comes from PARLEY_SECRET and is not in the backup; keep it: a restore needs the same value");
    }
    if (manifest.missing_objects.length) {
      const n = manifest.missing_objects.length;
      console.error(
        `error: the backup is written, but the database refers to ${n} ${n === 1 ? "object" : "objects"} storage does not have (the manifest's missing_objects): ${manifest.missing_objects.slice(0, 5).join(", ")}${n > 5 ? " ..." : ""}`,
      );
      process.exitCode = 1;
    }
  });
}

/** `parley restore PATH [--force]`: refuses a damaged backup, a running server and (without --force) a data dir with data. */
export async function restoreCommand(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(args, { force: { type: "boolean" } });
  const [source] = positionals;
  if (!source || positionals.length > 1) throw new UsageError("usage: parley restore PATH [--force]   (PATH: a folder made by parley backup)");
  await reportFailure(async () => {
    const { manifest, replacedTo } = await restoreDataDir(config, source, { force: values.force === true, now: () => new Date() });
    console.log(
      `restored the backup of ${manifest.created_at} (parley ${manifest.parley_version}, ${manifest.files.length} files, every SHA-256 checked) into ${config.dataDir}`,
    );
    if (replacedTo) console.log(`what was there before is in ${replacedTo}; remove it once the restored appliance is checked`);
    if (manifest.audio.storage === "s3")
      console.log(`note: the backup holds no audio; the recordings' audio is read from the S3 bucket ${manifest.audio.bucket}`);
    if (manifest.secret === "environment")
      console.log("note: the backup holds no server secret; start the server with the same PARLEY_SECRET as when it was made");
  });
}
