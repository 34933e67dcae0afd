/** What ffprobe learns about a stored audio file. */
export type AudioProbe = {
  durationSeconds: number;
  /** Container as the API reports it (spec 6 recording.uploaded): wav, mp3, m4a, flac, or ogg/webm/other. */
  format: string;
  codec: string;
  sampleRate: number;
  channels: number;
};

/** Thrown when a file is not audio ffmpeg can decode (maps to audio_format_unsupported). */
export class UndecodableAudioError extends Error {}

/**
 * Thrown when ffmpeg was killed by a signal Parley did not send (a service manager stopping
 * every process of the service at once): says nothing about the file, so the work is retried.
 */
export class DecoderInterruptedError extends Error {}

/**
 * Thrown when the decoder itself cannot run (its binary missing or not executable): says
 * nothing about the file, and retrying will not help until the operator fixes the
 * installation, so the message names the fix.
 */
export class DecoderUnavailableError extends Error {
  constructor(binary: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`The audio decoder cannot run (${binary}: ${why}). Install ffmpeg or set PARLEY_FFMPEG_PATH to an ffmpeg binary, then check with: parley doctor.`, {
      cause,
    });
  }
}

/** Audio decoding behind one interface (implementation: src/engines/ffmpeg-audio.ts). */
export interface AudioDecoder {
  /** Which ffmpeg binary is in use, for `parley doctor`. */
  readonly binary: string;
  probe(path: string): Promise<AudioProbe>;
  /** The whole file as 16 kHz mono float PCM, the input Whisper and Silero VAD expect. */
  decodePcm16k(path: string, signal?: AbortSignal): Promise<Float32Array>;
}
