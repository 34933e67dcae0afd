import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";

/** Where scripts/native-whisper.ts leaves Parley's whisper.cpp addon built for this machine (decision 046). */
const buildDir = join(import.meta.dir, "..", "..", "native", "whisper", "build");
export const NATIVE_WHISPER = {
  buildDir,
  addon: join(buildDir, "parley_whisper.node"),
  cli: join(buildDir, "bin", "whisper-cli"),
  /** whisper.cpp's own OpenAI-compatible server, built with the addon: the remote transcriber's tests and bench (issue 33). */
  server: join(buildDir, "bin", "whisper-server"),
  parakeetCli: join(buildDir, "bin", "parakeet-cli"),
  stamp: join(buildDir, "parley-build.json"),
  log: join(buildDir, "parley-build.log"),
};

/** What a build was made from, and for which CPU. */
export type NativeWhisperStamp = { source: string; cpu: string };

/**
 * The CPU's instruction-set features: an addon compiled for one CPU's features may crash on
 * another (an illegal instruction kills the process), so a checkout moved to a different
 * machine falls back to the portable build until rebuilt.
 */
export function cpuFingerprint(): string {
  let features = `${process.platform}-${process.arch} ${cpus()[0]?.model ?? ""}`;
  try {
    features =
      readFileSync("/proc/cpuinfo", "utf8")
        .match(/^(flags|Features)\s*:(.*)$/m)?.[2]
        ?.trim() ?? features;
  } catch {
    // not Linux: the model name stands for the features
  }
  return createHash("sha256").update(features).digest("hex").slice(0, 16);
}

export function readNativeWhisperStamp(build = NATIVE_WHISPER): NativeWhisperStamp | null {
  try {
    return JSON.parse(readFileSync(build.stamp, "utf8")) as NativeWhisperStamp;
  } catch {
    return null;
  }
}

/** Whether the native addon can be used here, and if not, why (for `parley doctor`). */
export function nativeWhisperStatus(build = NATIVE_WHISPER): { usable: true } | { usable: false; reason: string } {
  const stamp = readNativeWhisperStamp(build);
  if (!stamp || !existsSync(build.addon)) return { usable: false, reason: `not built (npm run build:whisper; log: ${build.log})` };
  if (stamp.cpu !== cpuFingerprint()) return { usable: false, reason: "built for another CPU (npm run build:whisper)" };
  return { usable: true };
}
