import { describe, expect, test } from "bun:test";
import { ClassicDiarizer } from "../../src/engines/classic-diarizer";
import { FfmpegAudioDecoder, findFfmpeg } from "../../src/engines/ffmpeg-audio";
import { spoken, VOICES } from "../engines/speech";
import { COMPRESSED_STREAMS, encoded, liveApp, liveSegments, measuredTranscriber, parts, speech, transcriptionOf, utteranceTranscriber } from "./live-support";
import { concat, silence, voiced, wav } from "./pipeline-fixtures";
import { createRecording, eventsOf, put, sha256 } from "./recordings-support";

/** The last utterance runs to 0.3 s before the end: no silence closes it while the recording streams. */
const openEnded = wav(concat(voiced(2), silence(1.5), voiced(2), silence(1.5), voiced(2), silence(0.3)));
const openParts = [openEnded.slice(0, 100_000), openEnded.slice(100_000, 190_000), openEnded.slice(190_000)];

const texts = (segments: { text: string }[]) => segments.map((s) => s.text);

describe("completion reuses the live work (decision 173)", () => {
  test("only the tail after the last closed region is transcribed; the transcript is the live segments and the tail's, then the summary", async () => {
    const measured = measuredTranscriber();
    const { t, tenant } = await liveApp({ transcriber: measured.transcriber });
    const rec = await createRecording(t, tenant.test);
    for (const [i, bytes] of openParts.entries()) await put(t, tenant.test, rec.id, bytes, { chunk_index: i });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    const live = liveSegments(t, txn.id);
    expect(texts(live)).toEqual(["utterance 1", "utterance 2"]);
    const callsWhileStreaming = measured.seconds.length;

    const body = { sha256: sha256(openEnded), file_size_bytes: openEnded.length };
    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body });
    await t.deps.queue.drain();
    // One more call, on the third utterance alone (with its padding), not on the 9.8 s recording.
    const completion = measured.seconds.slice(callsWhileStreaming);
    expect(completion).toHaveLength(1);
    expect(completion[0]!).toBeGreaterThan(1.8);
    expect(completion[0]!).toBeLessThan(3);
    const done = (await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body;
    expect(done.status).toBe("completed");
    // The live segments as they were, then the tail's: no duplicate, no gap.
    expect(done.segments.slice(0, 2).map((s: any) => ({ start: s.start, end: s.end, text: s.text }))).toEqual(
      live.map(({ start, end, text }) => ({ start, end, text })),
    );
    expect(texts(done.segments)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);
    expect(done.segments[2].start).toBeGreaterThan(live[1]!.end);
    expect(done.segments[2].start).toBeLessThan(7.3);
    expect(done.segments.every((s: any) => s.speaker === "SPEAKER_1")).toBe(true);
    expect(eventsOf(t, "transcription.completed").map((e) => e.id)).toEqual([txn.id]);
    expect(eventsOf(t, "summary.completed")).toHaveLength(1);
  });

  test("a recording whose speech all closed while it streamed completes without another transcriber call", async () => {
    const measured = measuredTranscriber();
    const { t, tenant } = await liveApp({ transcriber: measured.transcriber });
    const rec = await createRecording(t, tenant.test);
    for (const [i, bytes] of parts.entries()) await put(t, tenant.test, rec.id, bytes, { chunk_index: i });
    await t.deps.queue.drain();
    const calls = measured.seconds.length;
    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body: { sha256: sha256(speech) } });
    await t.deps.queue.drain();
    expect(measured.seconds).toHaveLength(calls);
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    const done = (await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body;
    expect(done).toMatchObject({ status: "completed", language: "en" });
    expect(texts(done.segments)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);
  });

  test("a chunk replaced after it was transcribed (and no live pass saw it): the verified file is transcribed whole", async () => {
    const measured = measuredTranscriber();
    const { t, tenant } = await liveApp({ transcriber: measured.transcriber });
    const rec = await createRecording(t, tenant.test);
    for (const [i, bytes] of openParts.entries()) await put(t, tenant.test, rec.id, bytes, { chunk_index: i });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    expect(liveSegments(t, txn.id)).toHaveLength(2);
    // Other bytes for chunk 0, same length; a busy box never ran the live pass it queued.
    const changed = openParts[0]!.slice();
    changed.fill(0, 50_000, 60_000);
    await put(t, tenant.test, rec.id, changed, { chunk_index: 0 });
    t.deps.db.query("DELETE FROM jobs WHERE type = 'live.transcribe' AND state = 'pending'").run();
    const whole = new Uint8Array([...changed, ...openParts[1]!, ...openParts[2]!]);
    const calls = measured.seconds.length;
    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body: { sha256: sha256(whole) } });
    await t.deps.queue.drain();
    // One call with all the speech (planned from the whole file), not the tail alone.
    const completion = measured.seconds.slice(calls);
    expect(completion).toHaveLength(1);
    expect(completion[0]!).toBeGreaterThan(6);
    const done = (await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body;
    expect(done.status).toBe("completed");
    // Utterances 1 and 2 were heard live; the zeroed bytes part the first utterance in two.
    expect(texts(done.segments)).toEqual(["utterance 3", "utterance 4", "utterance 5", "utterance 6"]);
  });
});

describe("decoding once (decisions 174, 202)", () => {
  const long = wav(concat(...Array.from({ length: 8 }, () => [voiced(2), silence(1.5)]).flat()));
  for (const [name, bytes] of [
    ["WAV", () => long],
    ...COMPRESSED_STREAMS.map(([name, ext, args]) => [name, () => encoded(long, ext, [...args])] as const),
  ] as const) {
    test(`each pass over a streamed ${name} decodes the new audio and the open region, not the recording from its start; a restart resumes`, async () => {
      const decoder = new FfmpegAudioDecoder(findFfmpeg());
      const decoded: number[] = [];
      const audio = {
        binary: decoder.binary,
        probe: (path: string) => decoder.probe(path),
        async decodePcm16k(path: string, signal?: AbortSignal) {
          const pcm = await decoder.decodePcm16k(path, signal);
          decoded.push(pcm.length / 16_000);
          return pcm;
        },
      };
      // One transcriber for both processes, so its utterances count on across the restart.
      const engines = { audio, transcriber: utteranceTranscriber() };
      const first = await liveApp(engines);
      const { tenant } = first;
      let t = first.t;
      const file = bytes();
      const size = Math.ceil(file.length / 10);
      const rec = await createRecording(t, tenant.test);
      for (let i = 0; i * size < file.length; i++) {
        await put(t, tenant.test, rec.id, file.slice(i * size, (i + 1) * size), { chunk_index: i });
        // The process stops with chunk 5's pass queued: another, on the same database and audio, takes it up.
        if (i === 5) t = (await liveApp(engines, { PARLEY_DATA_DIR: t.deps.config.dataDir })).t;
        await t.deps.queue.drain();
      }
      const txn = await transcriptionOf(t, tenant.test, rec.id);
      const segments = liveSegments(t, txn.id);
      expect(texts(segments)).toEqual(Array.from({ length: 8 }, (_, i) => `utterance ${i + 1}`));
      // Times as in the recording: utterance n starts at 3.5 (n - 1) s.
      for (const [i, s] of segments.entries()) expect(Math.abs(s.start - 3.5 * i)).toBeLessThan(0.35);
      // 28 s in 10 chunks: decoding each prefix again would be ~154 s of audio; each pass here
      // decodes from its committed point, a little more than the chunk it was given.
      // A compressed stream's pass also decodes a pre-roll before its committed point (under
      // 1 s: decision 202).
      const total = decoded.reduce((a, b) => a + b, 0);
      expect(decoded).toHaveLength(10);
      expect(total).toBeLessThan(28 * 1.9);
      expect(Math.max(...decoded)).toBeLessThan(8);
    });
  }
});

describe("reading once (decision 194)", () => {
  test("a pass over a streamed WAV reads the new chunk and the open region, not every chunk again to hash it", async () => {
    const { t, tenant } = await liveApp();
    const file = wav(concat(...Array.from({ length: 8 }, () => [voiced(2), silence(1.5)]).flat()));
    let read = 0;
    const storage = t.deps.storage;
    const readObject = storage.read.bind(storage);
    storage.read = (key, range) =>
      readObject(key, range).pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(bytes, out) {
            if (key.includes("/chunk-")) read += bytes.length;
            out.enqueue(bytes);
          },
        }),
      );
    const size = Math.ceil(file.length / 10);
    const chunk = (i: number) => file.slice(i * size, (i + 1) * size);
    const rec = await createRecording(t, tenant.test);
    for (let i = 0; i < 9; i++) {
      await put(t, tenant.test, rec.id, chunk(i), { chunk_index: i });
      await t.deps.queue.drain();
    }
    // Hashing every chunk on every pass reads 1 + 2 + ... + 9 chunks: 4.5 times the file.
    expect(read).toBeLessThan(file.length * 1.5);
    // A chunk sent again, even with the same bytes, is under a new key: the next pass reads and hashes it again.
    await put(t, tenant.test, rec.id, chunk(0), { chunk_index: 0 });
    const before = read;
    await put(t, tenant.test, rec.id, chunk(9), { chunk_index: 9 });
    await t.deps.queue.drain();
    expect(read - before).toBeGreaterThanOrEqual(2 * size);
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    expect(texts(liveSegments(t, txn.id))).toEqual(Array.from({ length: 8 }, (_, i) => `utterance ${i + 1}`));
    const progress = t.deps.db.query<{ waiting: string | null }, [string]>("SELECT waiting FROM live_progress WHERE transcription_id = ?").get(txn.id)!;
    expect(progress.waiting).toBeNull();
  });
});

describe("provisional speakers while streaming (decision 175)", () => {
  test("each live segment carries the speaker its voice matches so far; the completed transcript has the final ones", async () => {
    const { t, tenant } = await liveApp({ diarizer: new ClassicDiarizer() });
    const lines = [
      "Good morning, thank you for coming in today, tell me about the pain in your knee and when it started.",
      "It started about three weeks ago after a long walk, and it gets worse when I climb the stairs at home.",
      "Does it swell up in the evening, and have you taken anything for it, like ibuprofen or paracetamol?",
      "Yes, it swells a little at night, and I have been taking ibuprofen twice a day with some food.",
    ];
    const said = lines.map((line, i) => spoken(line, VOICES[i % 2]));
    const pcm = concat(...said.flatMap((line) => [line, silence(1.5)]));
    // Where each line ends (s): a line may come as several segments, all with its speaker.
    const ends = said.map((_, i) => said.slice(0, i + 1).reduce((sum, line) => sum + line.length / 16_000 + 1.5, 0));
    const bytes = wav(pcm);
    const size = Math.ceil(bytes.length / 4);
    const rec = await createRecording(t, tenant.test);
    for (let i = 0; i * size < bytes.length; i++) await put(t, tenant.test, rec.id, bytes.slice(i * size, (i + 1) * size), { chunk_index: i });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    const segments = t.deps.db
      .query<{ start: number; end: number; speaker: string | null }, [string]>(
        'SELECT start, "end", speaker FROM live_segments WHERE transcription_id = ? ORDER BY seq',
      )
      .all(txn.id);
    const lineOf = (s: { start: number; end: number }) => ends.findIndex((end) => (s.start + s.end) / 2 < end);
    expect(new Set(segments.map(lineOf))).toEqual(new Set([0, 1, 2, 3]));
    expect(segments.map((s) => s.speaker)).toEqual(segments.map((s) => ["SPEAKER_1", "SPEAKER_2"][lineOf(s) % 2]!));
    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body: { sha256: sha256(bytes) } });
    await t.deps.queue.drain();
    const done = (await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body;
    expect(done.status).toBe("completed");
    expect(done.speakers.map((s: any) => s.id)).toEqual(["SPEAKER_1", "SPEAKER_2"]);
  });
});
