import type { SpeakerTurn, Voiceprinter } from "../../engines/diarizer";
import type { Segment, Speaker } from "./schema";
import { defaultLabel } from "./speaker-assignment";

/** A known voice with its voiceprints of the running diarizer's kind. */
export type KnownVoice = { id: string; name: string; prints: number[][] };

/** Each speaker's voiceprint over all of their turns (null: too little speech). */
export async function speakerPrints(printer: Voiceprinter, pcm16k: Float32Array, turns: SpeakerTurn[]): Promise<Map<string, number[] | null>> {
  const prints = new Map<string, number[] | null>();
  for (const id of new Set(turns.map((t) => t.speaker)))
    prints.set(
      id,
      await printer.voiceprint(
        pcm16k,
        turns.filter((t) => t.speaker === id),
      ),
    );
  return prints;
}

/**
 * Known voices on speakers (decision 098): every speaker-voice pair scoring at least the
 * printer's threshold, best first, each speaker and each voice used once. A matched
 * speaker's label and segments carry the voice's name; its entry in speakers also names
 * the voice and the score.
 */
export function labelKnownVoices(
  printer: Voiceprinter,
  prints: Map<string, number[] | null>,
  voices: KnownVoice[],
  result: { segments: Segment[]; speakers: Speaker[] },
): { segments: Segment[]; speakers: Speaker[] } {
  const pairs: { speaker: string; voice: KnownVoice; score: number }[] = [];
  for (const [speaker, print] of prints) {
    if (!print) continue;
    for (const voice of voices) pairs.push({ speaker, voice, score: printer.similarity(print, printer.pool(voice.prints)) });
  }
  const matched = new Map<string, { voice: KnownVoice; score: number }>();
  const usedVoices = new Set<string>();
  for (const p of pairs.filter((p) => p.score >= printer.threshold).sort((a, b) => b.score - a.score)) {
    if (matched.has(p.speaker) || usedVoices.has(p.voice.id)) continue;
    matched.set(p.speaker, p);
    usedVoices.add(p.voice.id);
  }
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    segments: result.segments.map((s) => ({ ...s, speaker: matched.get(s.speaker)?.voice.name ?? s.speaker })),
    speakers: result.speakers.map((s) => {
      const m = matched.get(s.id);
      return m ? { id: s.id, label: m.voice.name, voice_id: m.voice.id, score: round(m.score) } : { id: s.id, label: defaultLabel(s.id) };
    }),
  };
}
