import { SingleBar } from "cli-progress";
import { formatTable, parseFlags, UsageError } from "./args";
import type { Config } from "../config";
import { DownloadError, importModels, type ModelsContext, modelStatus, type Progress, pullModel, removeModel, verifyModels } from "../model-files/install";
import { ChecksumError } from "../model-files/installed";
import { defaultManifest, type Manifest, UnknownModelError } from "../model-files/manifest";
import { runningCli } from "../runtime/cli-name";

const USAGE = `usage: parley models list [--json]
       parley models pull NAME        download from PARLEY_MODEL_MIRROR, verify, install
       parley models import PATH      install from a local folder or file (air-gapped bundle)
       parley models verify [NAME]    re-check installed files against their checksums
       parley models remove NAME`;

/** One progress bar per file on stderr (stdout stays parseable); silent when stderr is not a terminal. */
function progressBars(): { onProgress: Progress; stop: () => void } {
  let bar: SingleBar | null = null;
  let key = "";
  const stop = () => {
    bar?.stop();
    bar = null;
  };
  const onProgress: Progress = (e) => {
    if (!process.stderr.isTTY) return;
    const k = `${e.phase} ${e.file}`;
    if (k !== key) {
      stop();
      key = k;
      bar = new SingleBar({ format: `${e.phase.padEnd(8)} {bar} {percentage}% {value}/{total} bytes  ${e.file}`, stream: process.stderr, hideCursor: true });
      bar.start(e.total ?? 0, 0);
    }
    if (e.total !== null) bar?.setTotal(e.total);
    bar?.update(e.done);
  };
  return { onProgress, stop };
}

/** The role each configured model plays, for `list` and `doctor`. */
export function configuredRoles(config: Config): Record<string, string> {
  return {
    [config.models.whisper]: "transcriber",
    [config.models.llm]: "llm",
    [config.models.embedding]: "embedder",
    [config.models.segmentation]: "segmentation",
    [config.models.speakerEmbedding]: "speakers",
  };
}

/** `parley models ...`; exported with the manifest as a parameter so tests can run it on their own. */
export async function modelsCommand(config: Config, args: string[], manifest: Manifest = defaultManifest): Promise<void> {
  const { values, positionals } = parseFlags(args, { json: { type: "boolean" } });
  const [sub, target] = positionals;
  const bars = progressBars();
  const ctx: ModelsContext = { modelsDir: config.modelsDir, mirror: config.models.mirror, manifest, onProgress: bars.onProgress };
  try {
    if (sub === "list") {
      const roles = configuredRoles(config);
      const rows = manifest.models.map((m) => ({
        name: m.name,
        kind: m.kind,
        status: modelStatus(ctx, m),
        in_use_as: roles[m.name] ?? null,
        description: m.description,
      }));
      if (values.json) return console.log(JSON.stringify(rows));
      console.log(formatTable(rows.map((r) => [r.name, r.kind, r.status, r.in_use_as ?? "", r.description])));
      return;
    }
    if (sub === "pull" && target) {
      const model = await pullModel(ctx, target);
      bars.stop();
      console.log(model.bundled ? `${target} is bundled with Parley; nothing to download` : `installed ${target} from ${config.models.mirror}`);
      return;
    }
    if (sub === "import" && target) {
      const { installed, refused } = await importModels(ctx, target);
      bars.stop();
      for (const name of installed) console.log(`installed ${name}`);
      for (const r of refused) console.error(`refused ${r.name}: ${r.reason}`);
      if (refused.length) process.exitCode = 1;
      return;
    }
    if (sub === "verify") {
      const results = await verifyModels(ctx, target);
      bars.stop();
      if (values.json) console.log(JSON.stringify(results));
      else if (results.length) console.log(formatTable(results.map((r) => [r.name, r.status, r.detail ?? ""])));
      else console.log(`no model installed, nothing to verify: ${runningCli()} models list shows what can be installed`);
      if (results.some((r) => r.status === "mismatch" || r.status === "missing")) process.exitCode = 1;
      return;
    }
    if (sub === "remove" && target) {
      removeModel(ctx, target);
      console.log(`removed ${target}`);
      return;
    }
    throw new UsageError(USAGE);
  } catch (err) {
    bars.stop();
    // Expected failures are one clear line and exit 1; anything else is a bug and keeps its stack.
    if (err instanceof ChecksumError || err instanceof DownloadError || err instanceof UnknownModelError) {
      console.error(`error: ${err.message}`);
      // A box without internet access is the usual cause, and the two ways round it are not obvious.
      if (sub === "pull" && err instanceof DownloadError)
        console.error(
          `Without internet access here: set PARLEY_MODEL_MIRROR to a mirror it can reach, or run ${runningCli()} models import PATH with the files copied from a machine that pulled them.`,
        );
      process.exitCode = 1;
      return;
    }
    throw err;
  }
}
