import { describe, expect, test } from "bun:test";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { COMPRESSED_STREAMS, encoded, liveApp, liveSegments, parts, speech, type T, transcriptionOf, utteranceTranscriber } from "./live-support";
import { LIVE_STREAMS_PER_KEY } from "../../src/modules/live/service";
import { chunksOf } from "../../src/storage/storage";
import { makeTenant, makeTestApp, waitFor } from "../helpers";
import { createRecording, eventsOf, put, sha256 } from "./recordings-support";

type Sse = { id: string | null; event: string; data: any };

/** Reads a live stream until `until` says so (or it ends); returns the events seen. */
async function readLive(t: T, key: string, id: string, until: (events: Sse[]) => boolean, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await t.app.handle(
    new Request(`http://localhost/v1/transcriptions/${id}/live`, { headers: { authorization: `Bearer ${key}`, ...headers }, signal: abort.signal }),
  );
  if (res.status !== 200) return { status: res.status, body: await res.json(), events: [] as Sse[] };
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  const reader = res.body!.getReader();
  const events: Sse[] = [];
  let buffer = "";
  while (!until(events)) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += new TextDecoder().decode(value);
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) => block.match(new RegExp(`^${name}: (.*)$`, "m"))?.[1] ?? null;
      if (field("event")) events.push({ id: field("id"), event: field("event")!, data: JSON.parse(field("data")!) });
    }
  }
  abort.abort();
  await reader.cancel().catch(() => {});
  return { status: 200, body: null, events };
}

describe("live transcription of streaming recordings", () => {
  test("the transcription exists from the first chunk and grows region by region, each transcribed once", async () => {
    const { t, tenant } = await liveApp();
    const rec = await createRecording(t, tenant.test);
    expect((await put(t, tenant.test, rec.id, parts[0]!, { chunk_index: 0 })).status).toBe(200);
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    expect(txn).toMatchObject({ status: "processing", recording_id: rec.id });
    expect(eventsOf(t, "transcription.started").map((e) => e.id)).toEqual([txn.id]);
    // The recording still streams: upload-complete is still possible.
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: tenant.test })).body.status).toBe("streaming");
    // Chunk 0 holds 3.1 s: the first utterance is closed by silence, the second is still open.
    expect(liveSegments(t, txn.id)).toEqual([{ seq: 1, start: 0, end: expect.any(Number), text: "utterance 1" }]);
    const first = liveSegments(t, txn.id)[0]!;
    expect(first.end).toBeGreaterThan(1.8);
    expect(first.end).toBeLessThan(2.6);

    for (const i of [1, 2]) await put(t, tenant.test, rec.id, parts[i]!, { chunk_index: i });
    await t.deps.queue.drain();
    const all = liveSegments(t, txn.id);
    expect(all.map((s) => [s.seq, s.text])).toEqual([
      [1, "utterance 1"],
      [2, "utterance 2"],
      [3, "utterance 3"],
    ]);
    expect(all[1]!.start).toBeGreaterThan(3.2);
    expect(all[2]!.start).toBeGreaterThan(6.7);

    // A pass run again (a restart, a duplicate job) finds nothing new and writes nothing.
    t.deps.queue.enqueue("live.transcribe", { project_id: tenant.project.id, mode: "test", transcription_id: txn.id });
    await t.deps.queue.drain();
    expect(liveSegments(t, txn.id)).toEqual(all);

    const body = { sha256: sha256(speech), file_size_bytes: speech.length };
    expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body })).status).toBe(425);
    await t.deps.queue.drain();
    const done = await transcriptionOf(t, tenant.test, rec.id);
    expect(done).toMatchObject({ id: txn.id, status: "completed" });
    expect(eventsOf(t, "transcription.started")).toHaveLength(1);
    expect((await t.call("GET", `/v1/recordings/${rec.id}`, { key: tenant.test })).body.status).toBe("completed");
  });

  test("chunks out of order wait for the gap", async () => {
    const { t, tenant } = await liveApp();
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, parts[1]!, { chunk_index: 1 });
    await t.deps.queue.drain();
    // Chunk 1 alone starts the transcription but is not decoded: it does not begin the file.
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    expect(txn.status).toBe("processing");
    expect(liveSegments(t, txn.id)).toEqual([]);
    await put(t, tenant.test, rec.id, parts[0]!, { chunk_index: 0 });
    await t.deps.queue.drain();
    // Chunks 0 and 1 end 0.4 s after the second utterance, under CLOSING_QUIET_SECONDS after the
    // VAD's end of it (its last frame above the lower threshold): only the first is closed yet.
    expect(liveSegments(t, txn.id).map((s) => s.text)).toEqual(["utterance 1"]);
    await put(t, tenant.test, rec.id, parts[2]!, { chunk_index: 2 });
    await t.deps.queue.drain();
    expect(liveSegments(t, txn.id).map((s) => s.text)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);
  });

  test("a chunk sent again with the same bytes changes nothing; with other bytes, live work stops and completion does it all", async () => {
    const { t, tenant } = await liveApp();
    const same = await createRecording(t, tenant.test);
    await put(t, tenant.test, same.id, parts[0]!, { chunk_index: 0 });
    await t.deps.queue.drain();
    await put(t, tenant.test, same.id, parts[0]!, { chunk_index: 0 });
    for (const i of [1, 2]) await put(t, tenant.test, same.id, parts[i]!, { chunk_index: i });
    await t.deps.queue.drain();
    const kept = await transcriptionOf(t, tenant.test, same.id);
    expect(liveSegments(t, kept.id).map((s) => s.text)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);

    const other = await createRecording(t, tenant.test);
    await put(t, tenant.test, other.id, parts[0]!, { chunk_index: 0 });
    await t.deps.queue.drain();
    const changed = parts[0]!.slice();
    changed.fill(0, 50_000, 60_000);
    await put(t, tenant.test, other.id, changed, { chunk_index: 0 });
    await put(t, tenant.test, other.id, parts[1]!, { chunk_index: 1 });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, other.id);
    const progress = t.deps.db.query<{ waiting: string }, [string]>("SELECT waiting FROM live_progress WHERE transcription_id = ?").get(txn.id)!;
    expect(progress.waiting).toContain("chunk 0 was replaced by other bytes");
    // Only the first pass's segment (the transcriber counts calls across the app: its 4th).
    expect(liveSegments(t, txn.id).map((s) => s.text)).toEqual(["utterance 4"]);
  });

  test("a chunk re-sent with the same bytes while a pass reads it (its old object deleted under the pass) does not stop live work", async () => {
    const { t, tenant } = await liveApp();
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, parts[0]!, { chunk_index: 0 });
    await t.deps.queue.drain();
    await put(t, tenant.test, rec.id, parts[1]!, { chunk_index: 1 });
    const keyOfChunk0 = () =>
      t.deps.db.query<{ storage_key: string }, [string]>("SELECT storage_key FROM recording_chunks WHERE recording_id = ? AND chunk_index = 0").get(rec.id)!
        .storage_key;
    const first = keyOfChunk0();
    // What the chaos test caught: the device's retry of chunk 0 (its 200 was lost) lands, and the
    // replaced object is deleted, while the next pass is reading that chunk for the decode (its
    // second read: the first is of the head, to know the container; the decode reads only the
    // WAV header of a chunk it has hashed before).
    const storage = t.deps.storage;
    const read = storage.read.bind(storage);
    let resent = false;
    let reads = 0;
    storage.read = (key, range) => {
      if (resent || key !== first || ++reads < 2) return read(key, range);
      resent = true;
      return new ReadableStream<Uint8Array>({
        async start(controller) {
          await put(t, tenant.test, rec.id, parts[0]!, { chunk_index: 0 });
          await storage.remove(first);
          for await (const bytes of chunksOf(read(key, range))) controller.enqueue(bytes);
          controller.close();
        },
      });
    };
    await t.deps.queue.drain();
    expect([resent, keyOfChunk0() !== first]).toEqual([true, true]);
    await put(t, tenant.test, rec.id, parts[2]!, { chunk_index: 2 });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    const progress = t.deps.db.query<{ waiting: string | null }, [string]>("SELECT waiting FROM live_progress WHERE transcription_id = ?").get(txn.id)!;
    expect(progress.waiting).toBeNull();
    expect(liveSegments(t, txn.id).map((s) => s.text)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);
  });

  test("Server-Sent Events: segments as they are committed, resumable with Last-Event-ID, then completed", async () => {
    const { t, tenant } = await liveApp();
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, parts[0]!, { chunk_index: 0 });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    // The stream is open before the second segment exists: it must arrive as it is committed.
    const watching = readLive(t, tenant.test, txn.id, (e) => e.some((x) => x.event === "completed"));
    for (const i of [1, 2]) await put(t, tenant.test, rec.id, parts[i]!, { chunk_index: i });
    await t.deps.queue.drain();
    const body = { sha256: sha256(speech), file_size_bytes: speech.length };
    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body });
    await t.deps.queue.drain();
    const { events } = await watching;
    expect(events.map((e) => [e.event, e.id])).toEqual([
      ["segment", "1"],
      ["segment", "2"],
      ["segment", "3"],
      ["completed", null],
    ]);
    // One voice (a diarizer that tells none apart): every provisional speaker is SPEAKER_1, as at completion.
    expect(events[1]!.data).toMatchObject({ seq: 2, text: "utterance 2", speaker: "SPEAKER_1" });
    expect(events[3]!.data).toMatchObject({ id: txn.id, status: "completed", speakers: [{ id: "SPEAKER_1" }] });

    const resumed = await readLive(t, tenant.test, txn.id, (e) => e.some((x) => x.event === "completed"), { "last-event-id": "2" });
    expect(resumed.events.map((e) => [e.event, e.id])).toEqual([
      ["segment", "3"],
      ["completed", null],
    ]);
  });

  test("the live stream has the transcription's access rule and a per-key bound", async () => {
    const { t, tenant } = await liveApp();
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, parts[0]!, { chunk_index: 0 });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    const other = makeTenant(t.deps);
    expect((await readLive(t, other.test, txn.id, () => true)).status).toBe(404);
    const noScope = tenant.key("test", { scopes: ["recordings:read"] });
    expect((await readLive(t, noScope, txn.id, () => true)).status).toBe(403);

    const key = tenant.key("test");
    const held = await Promise.all(
      Array.from({ length: LIVE_STREAMS_PER_KEY }, () =>
        t.app.handle(new Request(`http://localhost/v1/transcriptions/${txn.id}/live`, { headers: { authorization: `Bearer ${key}` } })),
      ),
    );
    expect(held.map((r) => r.status)).toEqual(Array(LIVE_STREAMS_PER_KEY).fill(200));
    const refused = await readLive(t, key, txn.id, () => true);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    // Another key is not held back by this one's streams.
    expect((await readLive(t, tenant.test, txn.id, (e) => e.length > 0)).events[0]!.event).toBe("segment");
    await held[0]!.body!.cancel();
    expect((await readLive(t, key, txn.id, (e) => e.length > 0)).status).toBe(200);
    for (const r of held.slice(1)) await r.body!.cancel();
  });

  test("a streamed upload that fails verification discards the provisional transcript and says so", async () => {
    const { t, tenant } = await liveApp();
    const rec = await createRecording(t, tenant.test);
    for (const i of [0, 1, 2]) await put(t, tenant.test, rec.id, parts[i]!, { chunk_index: i });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    expect(liveSegments(t, txn.id)).toHaveLength(3);
    const body = { sha256: "0".repeat(64), file_size_bytes: speech.length };
    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body });
    await t.deps.queue.drain();
    expect(liveSegments(t, txn.id)).toEqual([]);
    const failed = await transcriptionOf(t, tenant.test, rec.id);
    expect(failed).toMatchObject({ status: "failed", error: { code: "processing_error" } });
    expect(failed.error.message).toContain("provisional live transcript was discarded");
    expect(eventsOf(t, "transcription.failed").map((e) => e.id)).toEqual([txn.id]);
    const { events } = await readLive(t, tenant.test, txn.id, (e) => e.some((x) => x.event === "failed"));
    expect(events.map((e) => e.event)).toEqual(["failed"]);
  });

  test("M4A (its index comes last) waits for completion, says so, and is transcribed then", async () => {
    const { t, tenant } = await liveApp();
    const m4a = encoded(speech, "m4a", []);
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, m4a.slice(0, 20_000), { chunk_index: 0 });
    await put(t, tenant.test, rec.id, m4a.slice(20_000), { chunk_index: 1 });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    expect(liveSegments(t, txn.id)).toEqual([]);
    const waiting = t.deps.db.query<{ waiting: string }, [string]>("SELECT waiting FROM live_progress WHERE transcription_id = ?").get(txn.id)!;
    expect(waiting.waiting).toContain("M4A/MP4 keeps its index at the end");
    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body: { sha256: sha256(m4a) } });
    await t.deps.queue.drain();
    expect(await transcriptionOf(t, tenant.test, rec.id)).toMatchObject({ id: txn.id, status: "completed" });
  });
});

describe("live transcription of compressed streams", () => {
  for (const [name, ext, args] of COMPRESSED_STREAMS) {
    test(`a ${name} stream cut at arbitrary bytes is transcribed region by region too`, async () => {
      const { t, tenant } = await liveApp();
      const bytes = encoded(speech, ext, [...args]);
      const cut = Math.floor(bytes.length * 0.6);
      const rec = await createRecording(t, tenant.test);
      await put(t, tenant.test, rec.id, bytes.slice(0, cut), { chunk_index: 0 });
      await t.deps.queue.drain();
      const txn = await transcriptionOf(t, tenant.test, rec.id);
      expect(liveSegments(t, txn.id).length).toBeGreaterThanOrEqual(1);
      await put(t, tenant.test, rec.id, bytes.slice(cut), { chunk_index: 1 });
      await t.deps.queue.drain();
      const all = liveSegments(t, txn.id);
      expect(all.map((s) => s.text)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);
      expect(all[2]!.start).toBeGreaterThan(6.5);
      expect(all[2]!.start).toBeLessThan(7.3);
    });
  }
});

describe("live passes and the model lane", () => {
  test("a chunk arriving while its recording's pass runs does not hold a second model slot: the running pass goes round again", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const transcriber = utteranceTranscriber();
    const slow = {
      model: transcriber.model,
      async transcribe(pcm: Float32Array, options: Parameters<ScriptedTranscriber["transcribe"]>[1]) {
        if (++calls === 1) await gate;
        return transcriber.transcribe(pcm, options);
      },
    };
    const t = await makeTestApp({ engines: { transcriber: slow, llm: new ScriptedLlm(), diarizer: new SingleSpeakerDiarizer() } });
    const tenant = makeTenant(t.deps);
    t.deps.queue.start();
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, parts[0]!, { chunk_index: 0 });
    await waitFor("the first pass to reach the transcriber", () => calls === 1);
    for (const i of [1, 2]) await put(t, tenant.test, rec.id, parts[i]!, { chunk_index: i });
    const passes = () =>
      t.deps.db
        .query<{ state: string }, []>("SELECT state FROM jobs WHERE type = 'live.transcribe' ORDER BY created_at")
        .all()
        .map((j) => j.state);
    // The later chunks' jobs end at once (done), while the first pass still waits on the transcriber.
    await waitFor("the later passes to hand over", () => passes().join() === "running,done,done");
    release();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    await waitFor("all three regions", () => liveSegments(t, txn.id).length === 3);
    expect(liveSegments(t, txn.id).map((s) => s.text)).toEqual(["utterance 1", "utterance 2", "utterance 3"]);
    await t.deps.queue.stop();
  });
});
