// When a live pass counts a speech region as over (decision 210): at the end of what arrived,
// a region whose speech stopped at least CLOSING_QUIET_SECONDS before is closed there, instead
// of waiting for the next chunk to show the VAD's whole 0.8 s of hysteresis.
import { describe, expect, test } from "bun:test";
import { regionsFromProbabilities, SileroVad } from "../../src/engines/vad";
import {
  CLOSING_QUIET_SECONDS,
  closedRegions,
  closedSpeech,
  cutAtLastPause,
  EDGE_REST_SECONDS,
  EDGE_WAIT_SECONDS,
  PAD_SECONDS,
  quietUntil,
} from "../../src/modules/live/regions";
import { COMPRESSED_STREAMS, encoded, liveApp, liveSegments, transcriptionOf } from "./live-support";
import { concat, silence, voiced, wav } from "./pipeline-fixtures";
import { createRecording, put, sha256 } from "./recordings-support";

const region = { start: 1, end: 3 };

describe("the closing rule at the end of what arrived", () => {
  test("a region followed by 0.4 s of the window is closed; one followed by less than CLOSING_QUIET_SECONDS is still open", () => {
    expect(closedRegions([region], 3.4)).toEqual([region]);
    expect(closedRegions([region], 3 + CLOSING_QUIET_SECONDS - 0.01)).toEqual([]);
    // Closed, so the next pass starts after its padding; open, it starts at its padded start.
    expect(quietUntil([region], 3.4)).toBeLessThanOrEqual(3 + PAD_SECONDS);
    expect(quietUntil([region], 3.2)).toBeCloseTo(1 - PAD_SECONDS, 6);
  });

  test("on Silero's own regions: speech that stopped 0.5 s before the edge is closed, speech cut by the edge or 0.1 s before it is not", async () => {
    const vad = new SileroVad();
    const closedAt = async (pcm: Float32Array) => closedRegions((await vad.analyse(pcm)).regions, pcm.length / 16_000);
    expect(await closedAt(concat(voiced(2), silence(0.5)))).toHaveLength(1);
    expect(await closedAt(concat(voiced(2), silence(0.1)))).toEqual([]);
    expect(await closedAt(voiced(2))).toEqual([]);
  });
});

/** Hand-made frame probabilities of 0.1 s: runs of [probability, frames], as the VAD would score them. */
function analysisOf(runs: [number, number][]) {
  const probabilities = Float32Array.from(runs.flatMap(([p, n]) => Array<number>(n).fill(p)));
  const frameSeconds = 0.1;
  const windowSeconds = probabilities.length * frameSeconds;
  return { analysis: { regions: regionsFromProbabilities(probabilities, frameSeconds, windowSeconds), frameSeconds, probabilities }, windowSeconds };
}

describe("the turn running on at the end of what arrived (decision 211)", () => {
  test("is closed up to its last pause of 0.4 s; the speech after it stays open, from the pause's end", () => {
    // 1 s of quiet, speech with a 0.5 s pause, then a 0.4 s one (both under the VAD's 0.8 s: one
    // region) and speech to the edge: the cut goes at the last pause.
    const { analysis, windowSeconds } = analysisOf([
      [0.05, 10],
      [0.9, 12],
      [0.1, 5],
      [0.9, 3],
      [0.1, 4],
      [0.9, 15],
    ]);
    expect(analysis.regions).toHaveLength(1);
    expect(closedRegions(analysis.regions, windowSeconds)).toEqual([]);
    const regions = cutAtLastPause(analysis, windowSeconds);
    expect(regions.map((r) => [r.start, r.end].map((x) => Math.round(x * 10) / 10))).toEqual([
      [1, 3],
      [3.4, 4.9],
    ]);
    expect(closedRegions(regions, windowSeconds)).toEqual([regions[0]!]);
    // The next pass starts where the rest's padding begins, inside the pause: no audio twice.
    expect(quietUntil(regions, windowSeconds)).toBeCloseTo(3.4 - PAD_SECONDS, 6);
    expect(quietUntil(regions, windowSeconds)).toBeGreaterThanOrEqual(regions[0]!.end + PAD_SECONDS - 0.01);
  });

  test("a pause of 0.2 s, or quiet only at the edge, closes nothing; a region already closed is left as it is", () => {
    const short = analysisOf([
      [0.05, 10],
      [0.9, 20],
      [0.1, 2],
      [0.9, 15],
    ]);
    expect(cutAtLastPause(short.analysis, short.windowSeconds)).toEqual(short.analysis.regions);
    expect(closedRegions(cutAtLastPause(short.analysis, short.windowSeconds), short.windowSeconds)).toEqual([]);
    // A frame between the thresholds is not quiet: 0.2 s + 0.2 s around it is no pause of 0.3 s.
    const broken = analysisOf([
      [0.05, 10],
      [0.9, 20],
      [0.1, 2],
      [0.4, 1],
      [0.1, 2],
      [0.9, 15],
    ]);
    expect(cutAtLastPause(broken.analysis, broken.windowSeconds)).toEqual(broken.analysis.regions);
    const trailing = analysisOf([
      [0.05, 10],
      [0.9, 20],
      [0.1, 2],
    ]);
    expect(cutAtLastPause(trailing.analysis, trailing.windowSeconds)).toEqual(trailing.analysis.regions);
    const closed = analysisOf([
      [0.05, 10],
      [0.9, 12],
      [0.1, 5],
      [0.9, 8],
      [0.1, 6],
    ]);
    expect(closed.analysis.regions).toHaveLength(1);
    expect(cutAtLastPause(closed.analysis, closed.windowSeconds)).toEqual(closed.analysis.regions);
  });
});

/**
 * Two utterances `pauseSeconds` apart (one region: under the VAD's 0.8 s of hysteresis),
 * streamed as two chunks split `chunk0Seconds` into the audio: the live segments' texts after
 * the first chunk's pass, and the live segments after the second's.
 */
async function streamedInTwoChunks(pauseSeconds: number, chunk0Seconds: number) {
  const { t, tenant } = await liveApp();
  const bytes = wav(concat(voiced(2), silence(pauseSeconds), voiced(2), silence(1.5)));
  const cut = 44 + chunk0Seconds * 16_000 * 2;
  const rec = await createRecording(t, tenant.test);
  await put(t, tenant.test, rec.id, bytes.slice(0, cut), { chunk_index: 0 });
  await t.deps.queue.drain();
  const txn = await transcriptionOf(t, tenant.test, rec.id);
  const afterFirst = liveSegments(t, txn.id).map((s) => s.text);
  await put(t, tenant.test, rec.id, bytes.slice(cut), { chunk_index: 1 });
  await t.deps.queue.drain();
  return { t, key: tenant.test, rec, txn, bytes, afterFirst, live: liveSegments(t, txn.id) };
}

describe("a region closed at the end of a chunk (decision 210)", () => {
  test("is transcribed in that chunk's pass; the speaker going on after the pause is a new region, each heard once", async () => {
    // Chunk 0 ends 0.6 s after the first utterance.
    const { t, key, rec, txn, bytes, afterFirst, live } = await streamedInTwoChunks(0.7, 2.6);
    expect(afterFirst).toEqual(["utterance 1"]);
    expect(live.map((s) => s.text)).toEqual(["utterance 1", "utterance 2"]);
    expect(live[0]!.end).toBeLessThan(2.6);
    expect(live[1]!.start).toBeGreaterThan(2.6);

    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key, body: { sha256: sha256(bytes) } });
    await t.deps.queue.drain();
    const done = (await t.call("GET", `/v1/transcriptions/${txn.id}`, { key })).body;
    expect(done.status).toBe("completed");
    expect(done.segments.map((s: { text: string }) => s.text)).toEqual(["utterance 1", "utterance 2"]);
  });
});

describe("a turn running over the end of a chunk (decision 211)", () => {
  test("its speech before a pause is transcribed in that chunk's pass, the rest in the next, each once", async () => {
    // Still speaking at the chunk's end: chunk 0 ends 1 s into the second utterance.
    const { afterFirst, live } = await streamedInTwoChunks(0.6, 3.6);
    expect(afterFirst).toEqual(["utterance 1"]);
    expect(live.map((s) => s.text)).toEqual(["utterance 1", "utterance 2"]);
    expect(live[0]!.end).toBeLessThan(2.6);
    expect(live[1]!.start).toBeGreaterThan(2.3);
  });
});

describe("the turn running over the end of what arrived, when the next chunk is far off (decision 234)", () => {
  const far = EDGE_WAIT_SECONDS + 5;
  const rounded = (rs: { start: number; end: number }[]) => rs.map((r) => [r.start, r.end].map((x) => Math.round(x * 100) / 100));

  test("is cut at its quietest frame in the last 3 s, leaving the next pass EDGE_REST_SECONDS of it", () => {
    // 1 s of quiet, then speech to the edge with a dip to 0.4 (a word gap, not quiet) 1 s before it.
    const { analysis, windowSeconds } = analysisOf([
      [0.05, 10],
      [0.9, 20],
      [0.4, 1],
      [0.9, 7],
      [0.6, 1],
      [0.9, 2],
    ]);
    const { closed, until } = closedSpeech(analysis, analysis.regions, windowSeconds, far);
    expect(rounded(closed)).toEqual([[1, 3.05]]);
    expect(until).toBeCloseTo(3.05, 6);
    // Not at the dip 0.2 s before the edge: that would leave the next pass too little to open a region on.
    expect(windowSeconds - until).toBeGreaterThan(EDGE_REST_SECONDS);
    // The next pass starts at the cut: the open region's padded start is behind it.
    expect(quietUntil(analysis.regions, windowSeconds)).toBeLessThan(3.05);
  });

  test("speech that stopped at the edge, under CLOSING_QUIET_SECONDS before it, is closed in its quiet", () => {
    const { analysis, windowSeconds } = analysisOf([
      [0.05, 10],
      [0.9, 20],
      [0.05, 2],
    ]);
    expect(closedRegions(analysis.regions, windowSeconds)).toEqual([]);
    const { closed, until } = closedSpeech(analysis, analysis.regions, windowSeconds, far);
    expect(rounded(closed)).toEqual([[1, 3]]);
    expect(until).toBeGreaterThan(3);
    expect(until).toBeLessThan(windowSeconds);
  });

  test("nothing is cut when the next chunk comes soon, when under 1 s of the turn arrived, or when the turn is closed already", () => {
    const turn = analysisOf([
      [0.05, 10],
      [0.9, 20],
      [0.4, 1],
      [0.9, 10],
    ]);
    expect(closedSpeech(turn.analysis, turn.analysis.regions, turn.windowSeconds, EDGE_WAIT_SECONDS)).toEqual({ closed: [], until: turn.windowSeconds });
    const young = analysisOf([
      [0.05, 30],
      [0.9, 9],
    ]);
    expect(closedSpeech(young.analysis, young.analysis.regions, young.windowSeconds, far)).toEqual({ closed: [], until: young.windowSeconds });
    const ended = analysisOf([
      [0.05, 10],
      [0.9, 20],
      [0.05, 10],
    ]);
    expect(closedSpeech(ended.analysis, ended.analysis.regions, ended.windowSeconds, far)).toEqual({
      closed: ended.analysis.regions,
      until: ended.windowSeconds,
    });
  });
});

describe("a turn running over the end of a chunk sent in real time (decision 234)", () => {
  const samples = concat(voiced(2), silence(1.5), voiced(6), silence(1.5));
  const turn = wav(samples);
  const turnSeconds = samples.length / 16_000;

  /**
   * A 6 s turn, chunk 1 ending 3.5 s into it (by bytes, for a compressed stream about that), chunks
   * sent `everySeconds` apart: the live segments after chunk 1, then all.
   */
  async function streamedTurn(everySeconds: number, bytes = turn) {
    const { t, tenant } = await liveApp();
    const at = (seconds: number) => (seconds === 0 ? 0 : bytes === turn ? 44 + seconds * 32_000 : Math.round((bytes.length * seconds) / turnSeconds));
    const edges = [0, 3, 7].map(at).concat(bytes.length);
    const rec = await createRecording(t, tenant.test);
    const send = async (i: number) => {
      t.clock.advance(everySeconds * 1000);
      await put(t, tenant.test, rec.id, bytes.slice(edges[i], edges[i + 1]), { chunk_index: i });
      await t.deps.queue.drain();
    };
    await send(0);
    await send(1);
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    const afterTurnStarted = liveSegments(t, txn.id);
    await send(2);
    return { afterTurnStarted, live: liveSegments(t, txn.id) };
  }

  test("its speech before the chunk's edge is transcribed in that chunk's pass, the rest in the next, each once", async () => {
    const { afterTurnStarted, live } = await streamedTurn(4);
    expect(afterTurnStarted.map((s) => s.text)).toEqual(["utterance 1", "utterance 2"]);
    const cut = afterTurnStarted[1]!.end;
    expect(cut).toBeGreaterThan(4.5);
    expect(cut).toBeLessThan(7 - EDGE_REST_SECONDS);
    expect(live.map((s) => s.text)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);
    // The rest starts where the cut is (its audio was not heard before), and runs to the turn's end.
    expect(live[2]!.start).toBeGreaterThanOrEqual(cut - 0.01);
    expect(live[2]!.start).toBeLessThan(cut + 0.1);
    expect(live[2]!.end).toBeGreaterThan(9.4);
  });

  for (const [name, ext, args] of COMPRESSED_STREAMS)
    test(`${name}: cut, the rest decoded from the cut and transcribed once`, async () => {
      const { afterTurnStarted, live } = await streamedTurn(4, encoded(turn, ext, [...args]));
      expect(afterTurnStarted.map((s) => s.text)).toEqual(["utterance 1", "utterance 2"]);
      const cut = afterTurnStarted[1]!.end;
      expect(live.map((s) => s.text)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);
      expect(live[2]!.start).toBeGreaterThanOrEqual(cut - 0.01);
      expect(live[2]!.start).toBeLessThan(cut + 0.1);
      expect(live[2]!.end).toBeGreaterThan(9.3);
    });

  test("sent back to back, the turn waits for its end and is transcribed whole", async () => {
    const { afterTurnStarted, live } = await streamedTurn(1);
    expect(afterTurnStarted.map((s) => s.text)).toEqual(["utterance 1"]);
    expect(live.map((s) => s.text)).toEqual(["utterance 1", "utterance 2"]);
    expect(live[1]!.start).toBeLessThan(3.6);
  });
});
