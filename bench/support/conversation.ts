import { spoken, VOICES } from "../../test/engines/speech";

/** What two people in a clinic might say; espeak-ng speaks each line, the voices taking turns. */
export const LINES = [
  "Good morning, thanks for coming in today.",
  "Morning. The knee has been bothering me again since last week.",
  "Is it worse when you climb the stairs or when you sit for a long time?",
  "Mostly on the stairs, and a little in the evening after work.",
  "Did you keep doing the exercises we talked about in March?",
  "For a while, then I stopped when it felt better.",
  "That happens a lot. Let us look at how much it bends now.",
  "It clicks a bit when I straighten it all the way.",
  "The clicking alone is not a worry. Any swelling in the morning?",
  "Some swelling on Monday, after I walked the dog for an hour.",
  "I would like you to start the exercises again, twice a day.",
  "Should I take anything for the pain in the meantime?",
  "Ibuprofen after meals for a week is fine, not more than three a day.",
  "And if it does not get better by the end of the month?",
  "Then we book an ultrasound and see the physiotherapist together.",
  "Can I still go running on the weekend?",
  "Short runs on flat ground, and stop if the pain comes back.",
  "All right. Do I need to book the next visit at the front desk?",
  "Yes, in four weeks. Bring the diary of how the knee feels each day.",
  "I will. Thank you, doctor.",
];

/** Deterministic PRNG (same clip every run). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export type Conversation = { pcm: Float32Array; seconds: number; speechSeconds: number };

/**
 * A conversation-like clip of `minutes` at 16 kHz: turns of one or two lines, the two
 * voices alternating, separated by pauses of varied length sized so that `silence` of the
 * clip is pause (espeak-ng's own short edges count as speech).
 */
export function conversationClip(minutes: number, silence = 0.35, seed = 7): Conversation {
  const rand = random(seed);
  const spokenLines = LINES.map((line, i) => spoken(line, VOICES[i % VOICES.length]));
  const total = Math.round(minutes * 60 * 16_000);
  const turns: Float32Array[] = [];
  let speech = 0;
  // Turns until the speech is as close as a whole line gets to its share of the clip.
  for (let i = 0; ; i++) {
    const turn = rand() < 0.4 ? [spokenLines[i % LINES.length]!, spokenLines[(i + 7) % LINES.length]!] : [spokenLines[i % LINES.length]!];
    const length = turn.reduce((n, t) => n + t.length, 0);
    if (speech + length / 2 > total * (1 - silence)) break;
    turns.push(...turn);
    speech += length;
  }
  // Pauses between turns: varied (0.3x to 1.7x the mean), scaled to fill what is left.
  const weights = turns.map(() => 0.3 + 1.4 * rand());
  const pauseSamples = Math.max(0, total - speech);
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const pcm = new Float32Array(speech + pauseSamples);
  let offset = 0;
  turns.forEach((t, i) => {
    offset += Math.floor((weights[i]! / weightSum) * pauseSamples);
    pcm.set(t, offset);
    offset += t.length;
  });
  const clip = pcm.subarray(0, Math.min(pcm.length, total));
  return { pcm: clip, seconds: clip.length / 16_000, speechSeconds: Math.min(speech, clip.length) / 16_000 };
}
