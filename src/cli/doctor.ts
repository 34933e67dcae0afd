import { existsSync } from "node:fs";
import { parseFlags } from "./args";
import { encryptionCheck, plaintextAudioCheck } from "./doctor-encryption";
import { remoteEngineChecks } from "./doctor-remote";
import { askRunningServer, reportsOn } from "./doctor-server";
import { tlsChecks } from "./doctor-tls";
import { type Config, DEFAULT_LLM } from "../config";
import { createEngines, type Engines } from "../engines";
import { detectGpus } from "../engines/gpu";
import { LlamaLlm } from "../engines/llama-llm";
import { TransformersEmbedder } from "../engines/transformers-embedder";
import { SileroVad } from "../engines/vad";
import { WasmAudioDecoder } from "../engines/wasm-audio";
import { locateNativeWhisper } from "../engines/whisper-native";
import { WhisperTranscriber } from "../engines/whisper-transcriber";
import { ParakeetTranscriber } from "../engines/parakeet-transcriber";
import { findWiderThanPrivate } from "../data-dir/private";
import { bundled } from "../db/bundled";
import { createLogger } from "../log";
import { RuntimeFiles } from "../runtime/files";
import { runningCli } from "../runtime/cli-name";
import { verifyModels } from "../model-files/install";
import { readInstalled } from "../model-files/installed";
import { readWhisperHeader } from "../model-files/ggml-header";
import { describeParakeetFile, isParakeetFile, readParakeetHeader } from "../model-files/parakeet-header";
import { defaultManifest, installAdvice, modelFilePath, type Manifest } from "../model-files/manifest";
import { configuredModelState, describeWhisperFile, type ModelState, usable } from "../model-files/state";
import { type Check, diskChecks } from "../verdicts";

export type { Check };

/**
 * How the operator runs parley here, for advice they can follow: the compiled executable
 * (`parley ...`, no checkout, no npm) or a checkout (`npm run parley -- ...`).
 */
export type Context = { executable: boolean; cli: string };
export const runningContext = (): Context => ({ executable: bundled !== null, cli: runningCli() });

async function ffmpegCheck(binary: string): Promise<Check> {
  try {
    const proc = Bun.spawn([binary, "-version"], { stdout: "pipe", stderr: "ignore" });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    return { check: "ffmpeg", ok: code === 0, detail: `${binary}: ${out.split("\n")[0] ?? "no version"}` };
  } catch (err) {
    return {
      check: "ffmpeg",
      ok: false,
      detail: `${binary} cannot run (${(err as Error).message}); install ffmpeg (apt-get install ffmpeg) or set PARLEY_FFMPEG_PATH`,
    };
  }
}

/**
 * One verdict per engine: its model's files (installed, or the command that installs them),
 * then the model loaded for real, so the report says what would actually run (CPU or which GPU).
 */
async function engineCheck(ctx: Context, name: string, model: string, state: ModelState, load: () => Promise<string | null>): Promise<Check> {
  const files = filesCheck(ctx, name, model, state);
  if (!files.ok) return files;
  try {
    return { check: name, ok: true, detail: `${model} on ${(await load()) ?? "unknown backend"}` };
  } catch (err) {
    return { check: name, ok: false, detail: `${model} fails to load: ${(err as Error).message}` };
  }
}

/** An engine's model files by the one rule of "installed" (decision 120), with what installs them when they fail it. */
function filesCheck(ctx: Context, check: string, model: string, state: ModelState): Check {
  const install = installAdvice(model, { cli: ctx.cli });
  if (state.status === "missing") return { check, ok: false, detail: `${model} is not installed: ${install}` };
  if (state.status === "partial") return { check, ok: false, detail: `${model} is not installed (${state.detail}): ${install}` };
  if (state.status === "mismatch")
    return { check, ok: false, detail: `${model} is not installed: the file under its name is ${state.detail}; reinstall it: ${install}` };
  return { check, ok: true, detail: `${model}: ${state.status}` };
}

/** The whisper build CPU transcription uses; the advice differs between a checkout (rebuild it) and the executable (it carries its builds). */
function whisperBuildCheck(ctx: Context, config: Config): Check {
  const native = locateNativeWhisper(new RuntimeFiles(config.dataDir));
  if (native.usable) return { check: "whisper build", ok: true, detail: `cpu-native: Parley's addon compiled for this CPU (${native.addon})` };
  if (!ctx.executable) return { check: "whisper build", ok: true, detail: `cpu-native ${native.reason}; CPU transcription runs on the slower portable build` };
  const why = native.reason.startsWith("carried, but built for a CPU")
    ? "the CPU-native build this executable carries was made for another kind of CPU"
    : "this executable carries no CPU-native build";
  return {
    check: "whisper build",
    ok: true,
    detail: `CPU transcription runs on the portable whisper build, correct but slower (${why}); for speed use a parley executable built on this kind of CPU, or a GPU (PARLEY_GPU)`,
  };
}

/**
 * Which transcription model file is in use, read from its header: Parakeet's or whisper's,
 * the quantization (f16, q8_0, q5_1) and the shape. Said only of a file that passed the rule of "installed" (which
 * compares a manifest model's header with what is published), so one cause fails one line.
 */
function whisperFileCheck(name: string, path: string, state: ModelState, manifest: Manifest): Check | null {
  if (!usable(state) || !existsSync(path)) return null;
  try {
    const detail = `${name}: ${isParakeetFile(path) ? `Parakeet, ${describeParakeetFile(readParakeetHeader(path))}` : describeWhisperFile(readWhisperHeader(path))}`;
    return { check: "transcriber model", ok: true, detail: manifest.models.some((m) => m.name === name && m.parameters) ? `${detail}, as published` : detail };
  } catch (err) {
    return { check: "transcriber model", ok: false, detail: `${path}: ${(err as Error).message}` };
  }
}

/** Whether Ask's default provider can answer, in agreement with the engine it needs. */
function askCheck(config: Config, engines: Engines, llm: Check | undefined): Check {
  const provider = config.ask.defaultProvider;
  const fallback = "or set PARLEY_ASK_PROVIDER=extractive (quotes from the transcripts, no model)";
  if (provider === "extractive") return { check: "ask provider", ok: true, detail: "extractive: quotes from the transcripts, no model" };
  if (provider === "openai_compatible") {
    if (!engines.remoteLlm)
      return { check: "ask provider", ok: false, detail: `openai_compatible needs PARLEY_OPENAI_BASE_URL and PARLEY_OPENAI_MODEL; set them, ${fallback}` };
    return {
      check: "ask provider",
      ok: true,
      detail: `openai_compatible: ${config.ask.openai.model} at ${config.ask.openai.baseUrl} (see remote llm)`,
    };
  }
  if (llm && !llm.ok) return { check: "ask provider", ok: false, detail: `llama_cpp cannot answer: its llm cannot run (see llm above); fix that, ${fallback}` };
  return { check: "ask provider", ok: true, detail: `llama_cpp on ${llm ? llm.detail : config.models.llm}` };
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
 * What `parley doctor` reports: the data dir's permissions, TLS (fingerprints to pin), ffmpeg, GPUs seen, one verdict
 * per engine (its model installed and loaded for real, on the backend it really uses), Ask's
 * provider in agreement with the engine it needs, model checksums with --verify, free space.
 */
export async function diagnose(
  config: Config,
  options: { verify?: boolean; engines?: Engines; manifest?: Manifest; context?: Context } = {},
): Promise<Check[]> {
  const manifest = options.manifest ?? defaultManifest;
  const engines = options.engines ?? createEngines(config, createLogger("silent"));
  const context = options.context ?? runningContext();
  const ctx = { modelsDir: config.modelsDir, mirror: config.models.mirror, manifest };
  const record = readInstalled(config.modelsDir);
  const checks: Check[] = [];
  const status = (name: string): ModelState => configuredModelState(config.modelsDir, name, manifest);
  /** The model's files, for an engine this process did not build itself (a test double). */
  const filesOnly = (check: string, name: string): Check => {
    const files = filesCheck(context, check, name, status(name));
    if (!files.ok) return files;
    if (!manifest.models.some((m) => m.name === name)) return { check, ok: true, detail: `${name} (a file path, used as is)` };
    return { ...files, detail: `${files.detail}${record[name] ? `, checksum recorded ${record[name].installed_at}` : ""}` };
  };

  checks.push(dataDirPermissionsCheck(config.dataDir));
  checks.push(...tlsChecks(config, new Date(), context.cli));
  checks.push(encryptionCheck(config, context.cli));
  checks.push(await plaintextAudioCheck(config));
  // The built-in decoders have no binary to run (decision 091).
  if (engines.audio instanceof WasmAudioDecoder)
    checks.push({ check: "audio decoder", ok: true, detail: `${engines.audio.binary}; no ffmpeg 5.1 or newer on the PATH` });
  else checks.push(await ffmpegCheck(engines.audio.binary));
  const gpus = detectGpus();
  checks.push({
    check: "gpu",
    ok: true,
    detail: `PARLEY_GPU=${config.gpu}; seen: ${[gpus.cuda && "cuda", gpus.vulkan && "vulkan"].filter(Boolean).join(", ") || "none (CPU only)"}`,
  });

  // Engines on OpenAI-compatible servers are asked for real; their local model files are not needed (decision 188).
  checks.push(...(await remoteEngineChecks(config, engines)));
  const t = engines.transcriber;
  if (!config.engines.transcriber) {
    checks.push(
      t instanceof WhisperTranscriber
        ? await engineCheck(context, "transcriber", config.models.whisper, status(config.models.whisper), async () => (await t.load()).backend)
        : t instanceof ParakeetTranscriber
          ? await engineCheck(context, "transcriber", config.models.whisper, status(config.models.whisper), async () => `Parakeet on ${await t.backend()}`)
          : filesOnly("transcriber", config.models.whisper),
    );
    const whisperFile = whisperFileCheck(
      config.models.whisper,
      modelFilePath(config.modelsDir, config.models.whisper, manifest),
      status(config.models.whisper),
      manifest,
    );
    if (whisperFile) checks.push(whisperFile);
    checks.push(whisperBuildCheck(context, config));
  }
  const llm = engines.llm;
  // With summaries remote, the embedded model is needed only for Ask's llama_cpp provider.
  const localLlmUnused = config.engines.llm === "openai_compatible" && config.ask.defaultProvider !== "llama_cpp";
  const llmCheck = localLlmUnused
    ? undefined
    : llm instanceof LlamaLlm
      ? await engineCheck(context, "llm", config.models.llm, status(config.models.llm), async () => (await llm.load(), llm.backend()))
      : filesOnly("llm", config.models.llm);
  // An upgraded box keeps the earlier default's file (decision 235); the operator should know the faster one exists.
  if (llmCheck && config.models.llmKeptFromEarlierDefault)
    llmCheck.detail += `; the default is now ${DEFAULT_LLM.name}, about 1.4x as fast on a CPU: ${installAdvice(DEFAULT_LLM.name, { cli: context.cli })}, then restart (or set PARLEY_LLM_MODEL=${config.models.llm} to keep this one)`;
  if (llmCheck) checks.push(llmCheck);
  const embedder = engines.embedder;
  if (!config.engines.embedder)
    checks.push(
      embedder instanceof TransformersEmbedder
        ? await engineCheck(
            context,
            "embedder",
            config.models.embedding,
            status(config.models.embedding),
            async () => `CPU (onnxruntime), ${(await embedder.embed(["parley doctor"]))[0]!.length} dimensions`,
          )
        : filesOnly("embedder", config.models.embedding),
    );
  if (engines.vad instanceof SileroVad) {
    const vad = engines.vad;
    checks.push(
      await engineCheck(
        context,
        "vad",
        vad.model,
        { status: "bundled", detail: null },
        async () => (await vad.detect(new Float32Array(1600)), "CPU (onnxruntime)"),
      ),
    );
  }
  checks.push(askCheck(config, engines, llmCheck));
  checks.push({ check: "diarization", ok: true, detail: `${engines.diarizer.kind} (${engines.diarizer.model})` });
  if (options.verify) {
    for (const r of await verifyModels(ctx))
      checks.push({ check: `verify ${r.name}`, ok: r.status === "ok" || r.status === "unpinned", detail: `${r.status}${r.detail ? `: ${r.detail}` : ""}` });
  }
  checks.push(...diskChecks(config));
  return checks;
}

/**
 * `parley doctor [--verify] [--json]`: exits 1 when a check fails. With a server running on
 * the data dir, its checks, asked of it (decision 119); else this shell's. The first line
 * says which.
 */
export async function doctorCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parseFlags(args, { json: { type: "boolean" }, verify: { type: "boolean" } });
  const verify = Boolean(values.verify);
  const asked = await askRunningServer(config, { verify });
  const checks = [reportsOn(config, asked), ...(asked.checks ?? (await diagnose(config, { verify })))];
  if (values.json) console.log(JSON.stringify(checks));
  else for (const c of checks) console.log(`${c.ok ? (c.warning ? "warn" : "ok  ") : "FAIL"}  ${c.check.padEnd(20)} ${c.detail}`);
  if (checks.some((c) => !c.ok)) process.exitCode = 1;
}
