import { existsSync } from "node:fs";
import { parseFlags } from "./args";
import type { Config } from "../config";
import { createEngines, type Engines } from "../engines";
import { detectGpus } from "../engines/gpu";
import { LlamaLlm } from "../engines/llama-llm";
import { SileroVad } from "../engines/vad";
import { WasmAudioDecoder } from "../engines/wasm-audio";
import { locateNativeWhisper } from "../engines/whisper-native";
import { WhisperTranscriber } from "../engines/whisper-transcriber";
import { findWiderThanPrivate } from "../data-dir/private";
import { createLogger } from "../log";
import { RuntimeFiles } from "../runtime/files";
import { applianceVolumes } from "../storage";
import { spaceReport } from "../storage/volumes";
import { modelStatus, verifyModels } from "../model-files/install";
import { readInstalled } from "../model-files/installed";
import { defaultManifest, type Manifest } from "../model-files/manifest";

export type Check = { check: string; ok: boolean; detail: string };

const MB = 1024 * 1024;

async function ffmpegCheck(binary: string): Promise<Check> {
  try {
    const proc = Bun.spawn([binary, "-version"], { stdout: "pipe", stderr: "ignore" });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    return { check: "ffmpeg", ok: code === 0, detail: `${binary}: ${out.split("\n")[0] ?? "no version"}` };
  } catch (err) {
    return { check: "ffmpeg", ok: false, detail: `${binary} cannot run (${(err as Error).message}); install ffmpeg or set PARLEY_FFMPEG_PATH` };
  }
}

/** Loads an engine's model for real, so the report says what would actually run (CPU or which GPU). */
async function engineCheck(name: string, model: string, installed: boolean, load: () => Promise<string | null>): Promise<Check> {
  if (!installed) return { check: name, ok: false, detail: `${model} is not installed: parley models pull ${model}` };
  try {
    return { check: name, ok: true, detail: `${model} on ${(await load()) ?? "unknown backend"}` };
  } catch (err) {
    return { check: name, ok: false, detail: `${model} fails to load: ${(err as Error).message}` };
  }
}

/**
 * Patient audio and transcripts are for the server's user only. A server writes everything
 * private (decision 079); this finds files from before, or copied in by hand.
 */
function dataDirPermissionsCheck(dataDir: string): Check {
  if (!existsSync(dataDir)) return { check: "data dir permissions", ok: true, detail: `${dataDir} does not exist yet (it is created private, 0700)` };
  const wide = findWiderThanPrivate(dataDir);
  if (wide.length === 0) return { check: "data dir permissions", ok: true, detail: `${dataDir}: private to its owner` };
  const named = wide.slice(0, 3).join(", ") + (wide.length > 3 ? ` and ${wide.length - 3} more` : "");
  return { check: "data dir permissions", ok: false, detail: `group or others can access ${named} in ${dataDir}; fix: chmod -R go-rwx ${dataDir}` };
}

/**
 * What `parley doctor` reports: each configured model (installed, checksum recorded,
 * optionally re-verified), the data dir's permissions, ffmpeg, GPUs seen, and the backend
 * each engine really uses.
 */
export async function diagnose(config: Config, options: { verify?: boolean; engines?: Engines; manifest?: Manifest } = {}): Promise<Check[]> {
  const manifest = options.manifest ?? defaultManifest;
  const engines = options.engines ?? createEngines(config, createLogger("silent"));
  const ctx = { modelsDir: config.modelsDir, mirror: config.models.mirror, manifest };
  const record = readInstalled(config.modelsDir);
  const checks: Check[] = [];
  const status = (name: string) => {
    const entry = manifest.models.find((m) => m.name === name);
    return entry ? modelStatus(ctx, entry) : "unknown";
  };

  for (const [role, name] of [["transcriber", config.models.whisper], ["llm", config.models.llm], ["embedder", config.models.embedding]] as const) {
    const s = status(name);
    const detail = s === "unknown" ? `${name} is not in the manifest (a file path is used as is)` : `${name}: ${s}${record[name] ? `, checksum recorded ${record[name].installed_at}` : ""}`;
    checks.push({ check: `model ${role}`, ok: s === "installed" || s === "unknown", detail });
  }
  if (options.verify) {
    for (const r of await verifyModels(ctx)) checks.push({ check: `verify ${r.name}`, ok: r.status === "ok" || r.status === "unpinned", detail: `${r.status}${r.detail ? `: ${r.detail}` : ""}` });
  }

  checks.push(dataDirPermissionsCheck(config.dataDir));
  // The built-in decoders have no binary to run (decision 091).
  if (engines.audio instanceof WasmAudioDecoder) checks.push({ check: "audio decoder", ok: true, detail: `${engines.audio.binary}; no ffmpeg 5.1 or newer on the PATH` });
  else checks.push(await ffmpegCheck(engines.audio.binary));
  const gpus = detectGpus();
  checks.push({ check: "gpu", ok: true, detail: `PARLEY_GPU=${config.gpu}; seen: ${[gpus.cuda && "cuda", gpus.vulkan && "vulkan"].filter(Boolean).join(", ") || "none (CPU only)"}` });

  const whisperInstalled = status(config.models.whisper) !== "missing" && status(config.models.whisper) !== "partial";
  if (engines.transcriber instanceof WhisperTranscriber) {
    const t = engines.transcriber;
    checks.push(await engineCheck("transcriber", config.models.whisper, whisperInstalled, async () => (await t.load()).backend));
  }
  const native = locateNativeWhisper(new RuntimeFiles(config.dataDir));
  checks.push({ check: "whisper build", ok: true, detail: native.usable ? `cpu-native: Parley's addon compiled for this CPU (${native.addon})` : `cpu-native ${native.reason}; CPU transcription runs on the slower portable build` });
  const llmInstalled = status(config.models.llm) !== "missing" && status(config.models.llm) !== "partial";
  if (engines.llm instanceof LlamaLlm) {
    const llm = engines.llm;
    checks.push(await engineCheck("llm", config.models.llm, llmInstalled, async () => (await llm.load(), llm.backend())));
  }
  if (engines.vad instanceof SileroVad) {
    const vad = engines.vad;
    checks.push(await engineCheck("vad", vad.model, true, async () => (await vad.detect(new Float32Array(1600)), "CPU (onnxruntime)")));
  }
  // The embedder belongs to search; its model name is reported as configured.
  const embedderModel = (engines.embedder as { model?: unknown }).model;
  checks.push({ check: "embedder", ok: typeof embedderModel === "string", detail: typeof embedderModel === "string" ? embedderModel : "not available" });
  checks.push({ check: "ask provider", ok: true, detail: config.ask.defaultProvider });
  checks.push({ check: "diarization", ok: true, detail: engines.diarizer.model ?? "none (every segment is SPEAKER_1)" });
  for (const v of spaceReport(applianceVolumes(config), config.minFreeBytes)) {
    const free = `${Math.floor(v.free_bytes / MB)} MB free of ${Math.floor(v.total_bytes / MB)} MB`;
    checks.push({ check: `disk ${v.volume}`, ok: !v.low, detail: v.low ? `${free}: below PARLEY_MIN_FREE_MB (${config.minFreeBytes / MB}), new uploads are refused; free space on this volume` : free });
  }
  return checks;
}

/** `parley doctor [--verify] [--json]`: exits 1 when a check fails. */
export async function doctorCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseFlags(args, { json: { type: "boolean" }, verify: { type: "boolean" } });
  const checks = await diagnose(config, { verify: Boolean(values.verify) });
  if (values.json) console.log(JSON.stringify(checks));
  else for (const c of checks) console.log(`${c.ok ? "ok  " : "FAIL"}  ${c.check.padEnd(20)} ${c.detail}`);
  if (checks.some((c) => !c.ok)) process.exitCode = 1;
}
