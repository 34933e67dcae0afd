import { describe, expect, test } from "bun:test";
import type { TranscribedSegment } from "../../src/engines/transcriber";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, eventsOf, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

/** Words spread evenly over [start, end] of the audio sent, as an engine with word times gives them. */
function timed(start: number, end: number, texts: string[]): TranscribedSegment {
  const step = (end - start) / texts.length;
  const words = texts.map((text, i) => ({ start: start + i * step, end: start + (i + 0.8) * step, text, confidence: 0.5 + i / 100 }));
  return { start, end, text: ` ${texts.join(" ")}`, confidence: 0.9, words };
}

// Two bursts of speech 6 s apart: the pipeline decodes only the speech (decision 100), so the
// engine's times are in the joined audio and must come back in the recording's.
const audio = concat(voiced(3), silence(6), voiced(3));
const SECOND_BURST = 9;

async function transcribed(segments: (pcm: Float32Array) => TranscribedSegment[]) {
  const app = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber({ segments }) } });
  const tenant = makeTenant(app.deps);
  const rec = await seedRecording(app.deps, { projectId: tenant.project.id, mode: "test" }, wav(audio));
  const created = await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec, max_speakers: 1 } });
  expect(created.status).toBe(202);
  await app.deps.queue.drain();
  const id: string = created.body.id;
  const get = (query = "") => app.call("GET", `/v1/transcriptions/${id}${query}`, { key: tenant.test });
  const patch = (index: number, body: object) => app.call("PATCH", `/v1/transcriptions/${id}/segments/${index}`, { key: tenant.test, body });
  return { app, tenant, id, get, patch, record: (await get()).body };
}

/** The engine's two segments: one in each burst of the joined audio (about 3 s each), the second naming an email address. */
const twoSegments = (pcm: Float32Array) => {
  const seconds = pcm.length / 16_000;
  return [timed(0, 2.5, ["the", "budget", "is", "final"]), timed(seconds - 2.5, seconds, ["write", "to", "ada@example.com", "today"])];
};

describe("word timestamps in transcripts", () => {
  test("each segment's words come back in the recording's times, inside their segment, spelling its text", async () => {
    const { record } = await transcribed(twoSegments);
    expect(record.status).toBe("completed");
    expect(record.segments).toHaveLength(2);
    for (const s of record.segments) {
      expect(s.words.map((w: { text: string }) => w.text).join(" ")).toBe(s.text);
      let previous = s.start;
      for (const w of s.words) {
        expect(w.start).toBeGreaterThanOrEqual(previous);
        expect(w.end).toBeGreaterThanOrEqual(w.start);
        expect(w.end).toBeLessThanOrEqual(s.end);
        expect(w.confidence).toBeGreaterThan(0);
        previous = w.start;
      }
    }
    // The second burst's words were said after the silence: mapped back past it, not left at ~3.5 s.
    expect(record.segments[0].words.at(-1).end).toBeLessThan(3);
    expect(record.segments[1].words[0].start).toBeGreaterThan(SECOND_BURST - 0.5);
    expect(record.segments[1].words.map((w: { confidence: number }) => w.confidence)).toEqual([0.5, 0.51, 0.52, 0.53]);
  });

  test("transcription.completed carries the segments as spec 6 shows them, without words", async () => {
    const { app, id, record } = await transcribed(twoSegments);
    const completed = eventsOf(app.deps, "transcription.completed").find((e) => e.data.id === id)!;
    expect(completed.data.segments).toEqual(record.segments.map(({ words: _, ...s }: { words: unknown }) => s));
    expect(completed.data.segments[0]).toEqual({
      start: expect.any(Number),
      end: expect.any(Number),
      text: "the budget is final",
      speaker: "SPEAKER_1",
      confidence: 0.9,
    });
  });

  test("an engine without word times gives segments without words", async () => {
    const { record } = await transcribed((pcm) => [{ start: 0, end: pcm.length / 16_000, text: " no words here", confidence: 0.9 }]);
    expect(record.segments).toHaveLength(1);
    expect("words" in record.segments[0]).toBe(false);
  });

  test("a corrected text drops that segment's words; a speaker change keeps them; revision 0 keeps the original words", async () => {
    const { record, get, patch } = await transcribed(twoSegments);
    const corrected = await patch(0, { text: "the budget is not final" });
    expect(corrected.status).toBe(200);
    expect("words" in corrected.body.segments[0]).toBe(false);
    expect(corrected.body.segments[1].words).toEqual(record.segments[1].words);

    const renamed = await patch(1, { speaker: "Ada" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.segments[1].speaker).toBe("Ada");
    expect(renamed.body.segments[1].words).toEqual(record.segments[1].words);

    expect((await get("?revision=0")).body.segments[0].words).toEqual(record.segments[0].words);
  });

  test("a redacted read drops the words of a segment whose text lost an identifier, and only those", async () => {
    const { record, get } = await transcribed(twoSegments);
    const redacted = (await get("?redacted=true")).body;
    expect(redacted.segments[1].text).toContain("[EMAIL]");
    expect(JSON.stringify(redacted)).not.toContain("ada@example.com");
    expect("words" in redacted.segments[1]).toBe(false);
    expect(redacted.segments[0].words).toEqual(record.segments[0].words);
  });

  test("the JSON export carries the words; the OpenAPI document describes them", async () => {
    const { app, tenant, id, record } = await transcribed(twoSegments);
    const exported = await app.call("GET", `/v1/transcriptions/${id}/export?format=json`, { key: tenant.test });
    expect(exported.status).toBe(200);
    const file = typeof exported.body === "string" ? JSON.parse(exported.body) : exported.body;
    expect(file.segments[1].words).toEqual(record.segments[1].words);

    const openapi = (await app.call("GET", "/v1/openapi.json")).body;
    expect(openapi.components.schemas.TranscriptWord).toMatchObject({ required: ["start", "end", "text", "confidence"] });
    const segment = openapi.components.schemas.Transcription.properties.segments.items;
    expect(segment.properties.words.items.$ref).toBe("#/components/schemas/TranscriptWord");
    expect(segment.required).not.toContain("words");
  });
});
