// One transcriber call per live pass, not per closed region (decision 193): whisper encodes
// a 30 s window however short its input, so a 2 s region cost as much as 30 s of audio.
import { describe, expect, test } from "bun:test";
import { ensureTestModels } from "../../scripts/test-models/cache";
import type { Transcriber } from "../../src/engines/transcriber";
import { WhisperTranscriber } from "../../src/engines/whisper-transcriber";
import { BATCH_SECONDS, batchesOf, MAX_REGION_SECONDS } from "../../src/modules/live/regions";
import { spoken, VOICES } from "../engines/speech";
import { waitFor } from "../helpers";
import { liveApp, liveSegments, parts, speech, transcriptionOf, utteranceTranscriber } from "./live-support";
import { concat, silence, voiced, wav } from "./pipeline-fixtures";
import { createRecording, put, sha256 } from "./recordings-support";

/** A transcriber that records the seconds of audio of each call, then answers as `inner`. */
function counted(inner: Transcriber) {
  const calls: number[] = [];
  const transcriber: Transcriber = { model: inner.model, transcribe: (pcm, options) => (calls.push(pcm.length / 16_000), inner.transcribe(pcm, options)) };
  return { calls, transcriber };
}

describe("a live pass joins its closed regions into one transcriber call (decision 193)", () => {
  test("four closed regions in one pass: one call, four segments in order at their places; the next pass goes on without gap or repeat", async () => {
    const { calls, transcriber } = counted(utteranceTranscriber());
    const { t, tenant } = await liveApp({ transcriber });
    // Eight utterances of 2 s, 1.5 s apart: utterance n starts at 3.5 (n - 1) s.
    const bytes = wav(concat(...Array.from({ length: 8 }, () => [voiced(2), silence(1.5)]).flat()));
    const half = 44 + 14 * 16_000 * 2; // the header and 14 s: four utterances, each closed by its silence
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, bytes.slice(0, half), { chunk_index: 0 });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    const first = liveSegments(t, txn.id);
    expect(calls).toHaveLength(1);
    // The speech alone with its padding (4 x 2.4 s), not the 14 s received.
    expect(calls[0]!).toBeLessThan(11);
    expect(first.map((s) => s.text)).toEqual(["utterance 1", "utterance 2", "utterance 3", "utterance 4"]);
    for (const [i, s] of first.entries()) {
      expect(Math.abs(s.start - 3.5 * i)).toBeLessThan(0.35);
      expect(Math.abs(s.end - (3.5 * i + 2))).toBeLessThan(0.35);
    }

    await put(t, tenant.test, rec.id, bytes.slice(half), { chunk_index: 1 });
    await t.deps.queue.drain();
    const all = liveSegments(t, txn.id);
    expect(calls).toHaveLength(2);
    expect(all.slice(0, 4)).toEqual(first);
    expect(all.map((s) => [s.seq, s.text])).toEqual(Array.from({ length: 8 }, (_, i) => [i + 1, `utterance ${i + 1}`]));
    for (const [i, s] of all.entries()) expect(Math.abs(s.start - 3.5 * i)).toBeLessThan(0.35);
  });

  test("with real whisper: one call per pass, its segments in order, none placed in the silence between the regions", async () => {
    const whisper = new WhisperTranscriber({ model: "tiny", path: ensureTestModels().whisper, gpu: "off", threads: 1, decoding: { temperatureInc: 0 } });
    const { calls, transcriber } = counted(whisper);
    const { t, tenant } = await liveApp({ transcriber });
    const lines = ["We reviewed the budget for the next quarter.", "The clinic needs two more nurses on Fridays.", "Let us meet again on Tuesday."];
    const said = lines.map((line, i) => spoken(line, VOICES[i % 2]));
    const gap = 4;
    const bytes = wav(concat(...said.flatMap((line) => [line, silence(gap)])));
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, bytes, { chunk_index: 0 });
    await t.deps.queue.drain();
    expect(calls).toHaveLength(1);
    const speech = said.reduce((sum, line) => sum + line.length / 16_000, 0);
    // The three lines with their padding, not the silences between them.
    expect(calls[0]!).toBeLessThan(speech + 2);
    const segments = liveSegments(t, (await transcriptionOf(t, tenant.test, rec.id)).id);
    expect(segments.length).toBeGreaterThan(0);
    const starts = segments.map((s) => s.start);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    // Past the padding and a VAD frame, the silences after each line hold no segment's start or end.
    let at = 0;
    const silences = said.map((line) => {
      at += line.length / 16_000 + gap;
      return { start: at - gap + 0.5, end: at - 0.5 };
    });
    const inSilence = (x: number) => silences.some((g) => x > g.start && x < g.end);
    for (const s of segments) expect([s.start, s.end].filter(inSilence)).toEqual([]);
  });
});

describe("completion stops the live pass still running (decision 193)", () => {
  test("a pass whose transcriber call is under way when the recording is verified is stopped, not waited for; its job ends done", async () => {
    let live: AbortSignal | undefined;
    const answers = utteranceTranscriber();
    const transcriber: Transcriber = {
      model: answers.model,
      transcribe(pcm, options) {
        if (live) return answers.transcribe(pcm, options);
        // The first call (the first live pass) answers only when told to stop, as a long whisper call would.
        live = options.signal;
        return new Promise((_, reject) => options.signal?.addEventListener("abort", () => reject(options.signal?.reason), { once: true }));
      },
    };
    const { t, tenant } = await liveApp({ transcriber });
    t.deps.queue.start();
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, parts[0]!, { chunk_index: 0 });
    await waitFor("the first pass to reach the transcriber", () => live !== undefined);
    for (const i of [1, 2]) await put(t, tenant.test, rec.id, parts[i]!, { chunk_index: i });
    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body: { sha256: sha256(speech) } });
    const txn = await waitFor("the transcription to complete", async () => {
      const now = await transcriptionOf(t, tenant.test, rec.id);
      return now?.status === "completed" ? now : null;
    });
    expect(live!.aborted).toBe(true);
    const done = (await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body;
    expect(done.segments.map((s: { text: string }) => s.text)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);
    const jobs = () =>
      t.deps.db
        .query<{ state: string }, []>("SELECT state FROM jobs WHERE type = 'live.transcribe'")
        .all()
        .map((j) => j.state);
    await waitFor("the live jobs to end", () => jobs().every((state) => state === "done"));
    await t.deps.queue.stop();
  });
});

describe("batches of closed regions", () => {
  test("at most one whisper window each, in order; a region cut at the longest is one batch alone", () => {
    const regions = [0, 11, 22, 33].map((start) => ({ start, end: start + 10 }));
    const batches = batchesOf(regions, 50);
    expect(batches.map((b) => b.regions)).toEqual([regions.slice(0, 2), regions.slice(2)]);
    for (const b of batches) expect(b.plan.seconds).toBeLessThanOrEqual(BATCH_SECONDS);
    expect(batches.map((b) => b.end)).toEqual([21.2, 43.2]);
    const long = [{ start: 1, end: 1 + MAX_REGION_SECONDS }];
    const [cut, ...more] = batchesOf(long, 40);
    expect(more).toEqual([]);
    expect(cut!.plan.spans).toHaveLength(1);
    expect(cut!.plan.seconds).toBeCloseTo(BATCH_SECONDS, 6);
  });
});
