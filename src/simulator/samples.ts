// The spoken sample conversations, imported `with { type: "file" }` so a compiled
// executable carries them (bun embeds the file and hands back a path it can read).
import clinicIntake from "./samples/clinic-intake.opus" with { type: "file" };
import legalConsultation from "./samples/legal-consultation.opus" with { type: "file" };
import salesCall from "./samples/sales-call.opus" with { type: "file" };
import teamStandup from "./samples/team-standup.opus" with { type: "file" };

/** One recording a simulated wearable can upload. */
export type SpeechSample = { name: string; path: string; mimeType: string };

/** Made with espeak-ng from our own scripts (samples/README.md, scripts/demo-samples.ts). */
export const SPEECH_SAMPLES: readonly SpeechSample[] = [
  { name: "clinic-intake", path: clinicIntake, mimeType: "audio/ogg" },
  { name: "sales-call", path: salesCall, mimeType: "audio/ogg" },
  { name: "legal-consultation", path: legalConsultation, mimeType: "audio/ogg" },
  { name: "team-standup", path: teamStandup, mimeType: "audio/ogg" },
];

/** The sample for the `n`th upload of device `seed`: every device walks all of them, from a different start. */
export function pickSample(seed: number, n: number): SpeechSample {
  return SPEECH_SAMPLES[(seed + n) % SPEECH_SAMPLES.length]!;
}

/** The bytes of a sample. */
export async function readSample(sample: SpeechSample): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await Bun.file(sample.path).arrayBuffer());
}

/**
 * The length of an Ogg Opus file in seconds: the granule position of its last page (48 kHz
 * samples, RFC 7845) less the pre-skip its OpusHead states. What streaming paces chunks by.
 */
export function oggOpusSeconds(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const capture = [0x4f, 0x67, 0x67, 0x53]; // "OggS"
  const isPage = (at: number) => capture.every((b, i) => bytes[at + i] === b);
  const head = new TextDecoder().decode(bytes.subarray(28, 36));
  if (!isPage(0) || head !== "OpusHead") throw new Error("not an Ogg Opus file");
  const preSkip = view.getUint16(28 + 10, true);
  for (let at = bytes.length - 27; at >= 0; at--) {
    if (isPage(at)) return Math.max(0, Number(view.getBigUint64(at + 6, true)) - preSkip) / 48_000;
  }
  throw new Error("no Ogg page found");
}
