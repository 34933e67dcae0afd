import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { boundaryErrors, diarizationErrorRate } from "../../scripts/test-audio/diarization-score";
import { conversation, type EspeakVoice, LINES, script } from "../../scripts/test-audio/espeak-conversation";
import { ClassicDiarizer, clusterPieces, mergeSteps, PENALTIES, type SpeechPiece } from "../../src/engines/classic-diarizer";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { FfmpegAudioDecoder, findFfmpeg } from "../../src/engines/ffmpeg-audio";
import { concatSamples } from "../../src/engines/pcm-spans";
import { accumulate, addFrames, combine, criticalPenalty, emptyStats, tiedDeltaBic } from "../../src/engines/speaker-gaussian";
import { SileroVad } from "../../src/engines/vad";

// Real speech: espeak-ng conversations in clearly different voices, through the real VAD.
const vad = new SileroVad();
const diarizer = new ClassicDiarizer();

async function diarize(order: number[], hint = {}) {
  const c = conversation(script(order));
  const { regions } = await vad.analyse(c.pcm);
  return { truth: c.turns, turns: await diarizer.diarize(c.pcm, regions, hint) };
}

const speakers = (turns: { speaker: string }[]) => [...new Set(turns.map((t) => t.speaker))];

describe("ClassicDiarizer on espeak-ng conversations", () => {
  test("two voices taking turns: two speakers, each true turn change found within 1 s", async () => {
    const { truth, turns } = await diarize([0, 1, 0, 1, 0, 1, 0, 1]);
    expect(speakers(turns)).toEqual(["SPEAKER_1", "SPEAKER_2"]);
    const errors = boundaryErrors(truth, turns);
    expect(errors).toHaveLength(7);
    for (const e of errors) expect(e).toBeLessThan(1);
    expect(turns).toHaveLength(8);
    expect(diarizationErrorRate(truth, turns)).toBeLessThan(0.1);
  });

  test("three voices: three speakers at the right turns, labelled in order of first appearance", async () => {
    const { truth, turns } = await diarize([2, 0, 1, 2, 1, 0, 2]);
    expect(speakers(turns)).toEqual(["SPEAKER_1", "SPEAKER_2", "SPEAKER_3"]);
    expect(turns.map((t) => t.speaker)).toEqual(["SPEAKER_1", "SPEAKER_2", "SPEAKER_3", "SPEAKER_1", "SPEAKER_3", "SPEAKER_2", "SPEAKER_1"]);
    for (const e of boundaryErrors(truth, turns)) expect(e).toBeLessThan(1);
  });

  test("one voice, whichever, stays one speaker", async () => {
    for (const voice of [0, 1, 2]) expect(speakers((await diarize([voice, voice, voice, voice])).turns)).toEqual(["SPEAKER_1"]);
  });

  test("a repeated speaker after a long run of another is still recognised", async () => {
    const { truth, turns } = await diarize([1, 0, 1, 1, 0, 0, 1]);
    expect(speakers(turns)).toHaveLength(2);
    expect(diarizationErrorRate(truth, turns)).toBeLessThan(0.1);
  });

  test("the hint bounds the count: max 1 joins two voices, min 3 splits two", async () => {
    expect(speakers((await diarize([0, 1, 0, 1], { maxSpeakers: 1 })).turns)).toEqual(["SPEAKER_1"]);
    expect(speakers((await diarize([0, 1, 0, 1], { minSpeakers: 3 })).turns)).toHaveLength(3);
    expect(speakers((await diarize([2, 0, 1, 2, 1, 0, 2], { maxSpeakers: 2 })).turns)).toHaveLength(2);
  });

  test("turns lie inside the speech regions, in time order", async () => {
    const c = conversation(script([0, 1, 0, 1]));
    const { regions } = await vad.analyse(c.pcm);
    const turns = await diarizer.diarize(c.pcm, regions, {});
    turns.forEach((t, i) => {
      expect(t.end).toBeGreaterThan(t.start);
      if (i > 0) expect(t.start).toBeGreaterThanOrEqual(turns[i - 1]!.end);
      expect(regions.some((r) => r.start <= t.start + 1e-9 && t.end <= r.end + 1e-9)).toBe(true);
    });
  });

  test("no speech regions, no turns; an aborted signal stops it", async () => {
    const c = conversation(script([0, 1]));
    expect(await diarizer.diarize(c.pcm, [], {})).toEqual([]);
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(diarizer.diarize(c.pcm, [{ start: 0, end: c.pcm.length / 16_000 }], {}, controller.signal)).rejects.toThrow("stop");
  });
});

describe("the clustering's stops by critical λ (bench/diarize.ts --margins, decision 219)", () => {
  // Pieces of 13 seeded Gaussian features, three "voices" apart in their means, four pieces each.
  let seed = 219;
  const uniform = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) + 0.5) / 2 ** 32;
  const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  const piece = (voice: number): SpeechPiece => {
    const frames = Float32Array.from({ length: 150 * 13 }, (_, i) => normal() * 4 + (i % 13 < 3 ? voice * 8 : 0));
    return { start: 0, end: 1.5, stats: addFrames(emptyStats(13), frames, 0, 150), stretch: 0, from: 0, to: 150 };
  };
  const pieces = [0, 1, 2].flatMap((voice) => [0, 1, 2, 3].map(() => piece(voice)));

  test("the critical λ is where a pair's tied ΔBIC changes sign", () => {
    const [a, b] = [pieces[0]!.stats, pieces[4]!.stats];
    const critical = criticalPenalty(a, b);
    expect(critical).toBeGreaterThan(0);
    expect(Math.abs(tiedDeltaBic(a, b, critical))).toBeLessThan(1e-6 * Math.abs(tiedDeltaBic(a, b, 0)));
    expect(tiedDeltaBic(a, b, critical * 0.9)).toBeGreaterThan(0);
    expect(tiedDeltaBic(a, b, critical * 1.1)).toBeLessThan(0);
  });

  test("a stop between two merges' critical λs leaves as many clusters as the merge curve says", () => {
    const curve = [
      ...mergeSteps(
        pieces,
        PENALTIES.merge,
        pieces.map((_, i) => i),
      ),
    ].map((s) => ({ clusters: s.clusters, critical: criticalPenalty(s.a, s.b) }));
    expect(curve.map((s) => s.clusters)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
    // The last two merges join voices: far above the merges within a voice.
    const within = Math.max(...curve.slice(0, -2).map((s) => s.critical));
    expect(Math.min(curve.at(-1)!.critical, curve.at(-2)!.critical)).toBeGreaterThan(2 * within);
    for (const stop of [within * 1.01, curve.at(-2)!.critical * 0.99]) {
      const expected = curve.find((s) => s.critical > stop)?.clusters ?? 1;
      expect(new Set(clusterPieces(pieces, {}, { merge: PENALTIES.merge, stop })).size).toBe(expected);
    }
    expect(new Set(clusterPieces(pieces, {}, { merge: PENALTIES.merge, stop: within * 1.01 })).size).toBe(3);
  });

  test("each merge is the least pair a full search finds, ties to the first pair (decision 220's kept row minima)", () => {
    // Repeated pieces tie exactly, with each other and in their pairs with others.
    const tied = [...pieces, pieces[0]!, pieces[5]!, pieces[5]!, pieces[11]!].map((p) => ({ ...p, stats: combine(p.stats, emptyStats(13)) }));
    const fast: number[][] = [];
    const clusterOf = tied.map((_, i) => i);
    for (const _ of mergeSteps(tied, PENALTIES.merge, clusterOf)) fast.push([...clusterOf]);
    fast.push([...clusterOf]);
    // The search over every living pair, as the clustering did before decision 220.
    const stats = tied.map((p) => combine(p.stats, emptyStats(13)));
    const slow = [tied.map((_, i) => i)];
    for (let alive = tied.map((_, i) => i); alive.length > 1; ) {
      let [best, bi, bj] = [Number.POSITIVE_INFINITY, -1, -1];
      for (const i of alive)
        for (const j of alive)
          if (i < j && tiedDeltaBic(stats[i]!, stats[j]!, PENALTIES.merge) < best) [best, bi, bj] = [tiedDeltaBic(stats[i]!, stats[j]!, PENALTIES.merge), i, j];
      accumulate(stats[bi]!, stats[bj]!);
      alive = alive.filter((k) => k !== bj);
      slow.push(slow.at(-1)!.map((c) => (c === bj ? bi : c)));
    }
    expect(fast).toEqual(slow);
  });
});

describe("SingleSpeakerDiarizer", () => {
  test("one SPEAKER_1 turn per speech region, and says diarization none", async () => {
    const d = new SingleSpeakerDiarizer();
    expect(d.kind).toBe("none");
    expect(
      await d.diarize(new Float32Array(16_000), [
        { start: 0, end: 0.5 },
        { start: 0.6, end: 1 },
      ]),
    ).toEqual([
      { speaker: "SPEAKER_1", start: 0, end: 0.5 },
      { speaker: "SPEAKER_1", start: 0.6, end: 1 },
    ]);
  });
});

describe("ClassicVoiceprinter", () => {
  const printer = diarizer.voiceprints;
  const printOf = async (voice: number, lines: number[]) => {
    const c = conversation(lines.map((i) => ({ speaker: voice, text: LINES[i]! })));
    return (await printer.voiceprint(c.pcm, [{ start: 0, end: c.pcm.length / 16_000 }]))!;
  };

  test("the same voice in other sentences matches; another voice does not", async () => {
    const prints = [];
    for (const v of [0, 1, 2]) prints.push({ enrolled: await printOf(v, [0, 1, 2]), later: await printOf(v, [6, 7, 8]) });
    for (const [v, p] of prints.entries()) {
      expect(printer.similarity(p.enrolled, p.later)).toBeGreaterThan(printer.threshold);
      for (const [w, q] of prints.entries()) if (w !== v) expect(printer.similarity(p.enrolled, q.later)).toBeLessThan(printer.threshold);
    }
    expect(printer.similarity(prints[0]!.enrolled, prints[0]!.enrolled)).toBeCloseTo(1, 5);
  });

  test("pooled samples of a voice still match it; too little speech gives no print", async () => {
    const pooled = printer.pool([await printOf(1, [0, 1]), await printOf(1, [3, 4])]);
    expect(printer.similarity(pooled, await printOf(1, [9, 10]))).toBeGreaterThan(printer.threshold);
    expect(printer.similarity(pooled, await printOf(0, [9, 10]))).toBeLessThan(printer.threshold);
    const c = conversation(script([0]));
    expect(await printer.voiceprint(c.pcm, [{ start: 0.5, end: 1 }])).toBeNull();
  });
});

// Voices of espeak-ng variants the diarizer was never tuned on (issue 26): the old tuning
// had en-us, en-us+f3 and en-us+klatt; the corpus' tuning half has other variants again.
describe("ClassicDiarizer on voices it was not tuned on", () => {
  const NEW_VOICES: Record<string, EspeakVoice> = {
    woman: { voice: "en-gb+f2", pitch: 62, rate: 165 },
    man: { voice: "en-us+m4", pitch: 38, rate: 150 },
    otherMan: { voice: "en-gb-scotland+m2", pitch: 45, rate: 170 },
    otherWoman: { voice: "en-us+f5", pitch: 70, rate: 180 },
    lone: { voice: "en-029+m8", pitch: 50, rate: 160 },
  };
  const HEADACHES = [
    "The headaches start in the afternoon and last until I go to sleep.",
    "Have you changed anything in your routine, like coffee or screen time?",
    "I drink more coffee since the new job, maybe four cups a day.",
    "That may be part of it. Do the headaches come with nausea or blurred vision?",
    "Sometimes the light bothers me, but I have never been sick.",
    "Let us try cutting the coffee down slowly, and keep a diary for two weeks.",
  ];

  async function talk(who: string[], order: number[]) {
    const voices = who.map((w) => NEW_VOICES[w]!);
    const c = conversation(
      order.map((speaker, i) => ({ speaker, text: HEADACHES[i % HEADACHES.length]! })),
      0.5,
      voices,
    );
    const { regions } = await vad.analyse(c.pcm);
    return { truth: c.turns, turns: await diarizer.diarize(c.pcm, regions, {}) };
  }

  // Issue 26: these pairs came back as one speaker under the full-covariance BIC (decision
  // 177); the tied-covariance BIC and the frame relabelling (decision 178) separate them.
  for (const [name, who] of [
    ["a woman and a man", ["woman", "man"]],
    ["two men", ["man", "otherMan"]],
    ["two women", ["woman", "otherWoman"]],
  ] as const) {
    test(`${name} talking about headaches: two speakers, every turn change within 1 s`, async () => {
      const { truth, turns } = await talk([...who], [0, 1, 0, 1, 0, 1]);
      expect(speakers(turns)).toHaveLength(2);
      for (const e of boundaryErrors(truth, turns)) expect(e).toBeLessThan(1);
      expect(diarizationErrorRate(truth, turns)).toBeLessThan(0.15);
    });
  }

  // Known limit (decision 178): three voices in 28 s still come back as one. The clustering λ
  // that keeps the corpus' long lone voices whole is too strict for so little speech each
  // (λ 4 separates them, and splits lone voices). `test.failing` tells the day it holds.
  test.failing("three new voices: three speakers (known limit)", async () => {
    const { truth, turns } = await talk(["woman", "man", "otherMan"], [0, 1, 2, 0, 2, 1]);
    expect(speakers(turns)).toHaveLength(3);
    expect(diarizationErrorRate(truth, turns)).toBeLessThan(0.15);
  });

  test("a new voice alone stays one speaker", async () => {
    const { turns } = await talk(["lone"], [0, 0, 0, 0, 0, 0]);
    expect(speakers(turns)).toEqual(["SPEAKER_1"]);
  });
});

// Real people (pocketsphinx-testdata): a librivox reader, each turn another chapter's clip,
// and a man saying "go forward ten meters". The reader's clips differ enough that two of them
// came back as a third speaker when the clustering stopped at λ 6.5 (decision 195).
describe("ClassicDiarizer on human speech", () => {
  const DATA = "/usr/share/pocketsphinx/test/data";
  const audio = new FfmpegAudioDecoder(findFfmpeg());

  test("a reader and another man taking turns: two speakers, every turn change within 1 s", async () => {
    const reader = [];
    for (const n of ["0870", "0880", "0890", "0920", "0930"])
      reader.push(await audio.decodePcm16k(`${DATA}/librivox/sense_and_sensibility_01_austen_64kb-${n}.wav`));
    const raw = readFileSync(`${DATA}/goforward.raw`);
    const man = Float32Array.from(new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2), (x) => x / 32_768);
    const pause = new Float32Array(0.8 * 16_000);
    const parts: Float32Array[] = [];
    const truth: { speaker: string; start: number; end: number }[] = [];
    let at = 0;
    for (const clip of reader)
      for (const [speaker, pcm] of [
        ["man", man],
        ["reader", clip],
      ] as const) {
        truth.push({ speaker, start: at / 16_000, end: (at + pcm.length) / 16_000 });
        parts.push(pcm, pause);
        at += pcm.length + pause.length;
      }
    const pcm = concatSamples(parts);
    const { regions } = await vad.analyse(pcm);
    const turns = await diarizer.diarize(pcm, regions, {});
    expect(speakers(turns)).toHaveLength(2);
    for (const e of boundaryErrors(truth, turns)) expect(e).toBeLessThan(1);
    expect(diarizationErrorRate(truth, turns)).toBeLessThan(0.15);
  });
});
