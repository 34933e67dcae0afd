import type { AudioDecoder, AudioProbe } from "./audio";
import { DecoderInterruptedError, DecoderUnavailableError, UndecodableAudioError } from "./audio";

/**
 * An ffmpeg for the tests and benches that compare against ffmpeg: the given one, else the
 * system's (CI installs Debian's; .ci/run). The server chooses with findSystemFfmpeg, which
 * also checks the version (decision 091).
 */
export function findFfmpeg(configured?: string): string {
  // Reported by `parley doctor` and as the failure of the first decode, never at boot.
  return configured || Bun.which("ffmpeg") || "ffmpeg";
}

/** The oldest ffmpeg trusted with uploads: Debian bookworm's 5.1, kept patched by Debian's security team (decision 091). */
export const MIN_FFMPEG_MAJOR = 5;
export const MIN_FFMPEG_MINOR = 1;

/** The version an ffmpeg prints, as [major, minor]; null when it cannot run or says none (a git build counts as new). */
export function ffmpegVersion(binary: string): [number, number] | null {
  try {
    const out = Bun.spawnSync([binary, "-hide_banner", "-version"], { stdout: "pipe", stderr: "ignore" });
    if (out.exitCode !== 0) return null;
    const line = out.stdout.toString().split("\n")[0] ?? "";
    const version = line.match(/ffmpeg version n?(\d+)\.(\d+)/);
    if (version) return [Number(version[1]), Number(version[2])];
    return /ffmpeg version (N-|git-)/.test(line) ? [Infinity, 0] : null;
  } catch {
    return null; // not there, or not executable
  }
}

/**
 * The system's ffmpeg when it is new enough to decode untrusted uploads, else null (the
 * built-in decoders run instead; decision 091).
 */
export function findSystemFfmpeg(path = process.env.PATH ?? ""): string | null {
  const system = Bun.which("ffmpeg", { PATH: path });
  const version = system ? ffmpegVersion(system) : null;
  if (!system || !version) return null;
  const [major, minor] = version;
  return major > MIN_FFMPEG_MAJOR || (major === MIN_FFMPEG_MAJOR && minor >= MIN_FFMPEG_MINOR) ? system : null;
}

/** ffmpeg's demuxer names as the API reports them (spec 6 lists wav, mp3, m4a, flac). */
function formatName(demuxer: string): string {
  if (demuxer.includes("mp4") || demuxer.includes("m4a")) return "m4a";
  if (demuxer.includes("webm") || demuxer.includes("matroska")) return "webm";
  return demuxer.split(",")[0] ?? demuxer;
}

function seconds(hms: string): number {
  const [h, m, s] = hms.split(":").map(Number);
  return (h ?? 0) * 3600 + (m ?? 0) * 60 + (s ?? 0);
}

/**
 * Reads what `ffmpeg -i` prints about the input: parsing ffmpeg's own banner needs no
 * ffprobe beside it (some static builds ship without); exported for its test.
 */
export function parseProbe(stderr: string): Omit<AudioProbe, "durationSeconds"> & { durationSeconds: number | null } {
  const input = stderr.match(/Input #0, (.+?), from /);
  const stream = stderr.match(/Stream #0:\d+[^:]*: Audio: ([^\s,(]+)[^,]*(?:, (\d+) Hz)?(?:, ([^,\n]+))?/);
  if (!input?.[1] || !stream?.[1]) throw new UndecodableAudioError("the file has no audio stream ffmpeg can read");
  const duration = stderr.match(/Duration: (\d+:\d+:\d+(?:\.\d+)?)/);
  const layout = stream[3]?.trim() ?? "";
  const channels = layout === "mono" ? 1 : layout === "stereo" ? 2 : Number(layout.match(/^(\d+) channels/)?.[1] ?? 1);
  return {
    format: formatName(input[1]),
    codec: stream[1],
    sampleRate: Number(stream[2] ?? 0),
    channels,
    durationSeconds: duration?.[1] ? seconds(duration[1]) : null,
  };
}

/**
 * ffmpeg in a session of its own (setsid), so a Ctrl-C or a signal to Parley's process group
 * reaches Parley alone, which stops ffmpeg itself when it needs to (the abort signal).
 */
const CANNOT_EXECUTE = new Set(["ENOENT", "EACCES", "ENOEXEC"]);

function spawnFfmpeg(binary: string, args: string[], signal?: AbortSignal) {
  try {
    return Bun.spawn([binary, "-hide_banner", "-nostdin", ...args], { stdout: "pipe", stderr: "pipe", signal, detached: true });
  } catch (err) {
    // The binary is missing or cannot be executed: an installation fault, not the file's. Other
    // spawn failures (EAGAIN, EMFILE) pass, and are thrown as they are for the job to retry.
    if (CANNOT_EXECUTE.has((err as { code?: string }).code ?? "")) throw new DecoderUnavailableError(binary, err);
    throw err;
  }
}

/** A signal from elsewhere (a service manager stopping the whole service) is not the file's fault. */
function checkNotKilled(proc: { signalCode: NodeJS.Signals | number | null }): void {
  if (proc.signalCode) throw new DecoderInterruptedError(`ffmpeg was stopped by ${proc.signalCode}`);
}

async function run(binary: string, args: string[]) {
  const proc = spawnFfmpeg(binary, args);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).text(), proc.exited]);
  checkNotKilled(proc);
  return { stdout, stderr, code };
}

/** AudioDecoder on the ffmpeg command line. */
export class FfmpegAudioDecoder implements AudioDecoder {
  constructor(readonly binary: string) {}

  /**
   * Header facts plus a trial decode of the first seconds, so a file with a plausible header
   * but undecodable data is caught at upload time rather than by the transcription job.
   */
  async probe(path: string): Promise<AudioProbe> {
    const head = await run(this.binary, ["-i", path, "-map", "0:a:0", "-t", "2", "-f", "null", "-"]);
    const facts = parseProbe(head.stderr);
    if (head.code !== 0) throw new UndecodableAudioError(`ffmpeg cannot decode the audio: ${lastLine(head.stderr)}`);
    let duration = facts.durationSeconds;
    if (duration === null) {
      // Containers without a duration in the header (raw streams): decode it all and read the clock.
      const full = await run(this.binary, ["-i", path, "-map", "0:a:0", "-f", "null", "-"]);
      const times = [...full.stderr.matchAll(/time=(\d+:\d+:\d+(?:\.\d+)?)/g)];
      duration = times.length ? seconds(times[times.length - 1]![1]!) : 0;
    }
    return { ...facts, durationSeconds: duration };
  }

  async decodePcm16k(path: string, signal?: AbortSignal): Promise<Float32Array> {
    const proc = spawnFfmpeg(this.binary, ["-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1", "-ar", "16000", "-f", "f32le", "-"], signal);
    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = proc.stdout.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      chunks.push(r.value);
      total += r.value.byteLength;
    }
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    if (signal?.aborted) throw signal.reason ?? new Error("decode aborted");
    checkNotKilled(proc);
    if (code !== 0) throw new UndecodableAudioError(`ffmpeg cannot decode the audio: ${lastLine(stderr)}`);
    // One copy into an aligned buffer; f32le samples never straddle the end of the stream.
    const out = new Float32Array(Math.floor(total / 4));
    const bytes = new Uint8Array(out.buffer);
    let offset = 0;
    for (const c of chunks) {
      bytes.set(c.subarray(0, Math.min(c.byteLength, bytes.byteLength - offset)), offset);
      offset += c.byteLength;
    }
    return out;
  }
}

function lastLine(stderr: string): string {
  return stderr.trim().split("\n").pop() ?? "unknown error";
}
