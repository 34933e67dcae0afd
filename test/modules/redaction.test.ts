import { beforeAll, describe, expect, test } from "bun:test";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { concat, eventsOf, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

// What the (scripted) transcriber hears: identifiers planted in ordinary clinical speech.
const IDENTIFIERS = ["Ada Lovelace", "March 3rd, 1961", "(555) 867-5309", "ada@example.com", "MRN-0048213"];
const SPOKEN = [
  " Good morning, my name is Ada Lovelace, born March 3rd, 1961.",
  " Call me at (555) 867-5309 or write to ada@example.com about MRN-0048213. The pain started two weeks ago.",
];

async function redactionApp() {
  const half = (pcm: Float32Array) => pcm.length / 32_000;
  const transcriber = new ScriptedTranscriber({
    segments: (pcm) => SPOKEN.map((text, i) => ({ start: i * half(pcm), end: (i + 1) * half(pcm), text, confidence: 0.9 })),
  });
  const app = await makeTestApp({ engines: { transcriber, llm: new ScriptedLlm() } });
  const tenant = makeTenant(app.deps);
  const scope = { projectId: tenant.project.id, mode: "test" as const };
  const audio = wav(concat(voiced(2), silence(1), voiced(2)));
  async function transcribed() {
    const rec = await seedRecording(app.deps, scope, audio);
    const txn = (await app.call("POST", "/v1/transcriptions", { key: tenant.test, body: { recording_id: rec } })).body;
    await app.deps.queue.drain();
    return txn.id as string;
  }
  return { app, tenant, transcribed };
}

const leaks = (value: unknown) => IDENTIFIERS.filter((id) => JSON.stringify(value).includes(id));

let r: Awaited<ReturnType<typeof redactionApp>>;
beforeAll(async () => {
  r = await redactionApp();
});

describe("redaction through the API", () => {
  test("?redacted=true removes the planted identifiers from the transcript and its summary and keeps the rest; without it nothing changes", async () => {
    const id = await r.transcribed();
    const plain = (await r.app.call("GET", `/v1/transcriptions/${id}`, { key: r.tenant.test })).body;
    expect(plain.status).toBe("completed");
    expect(leaks(plain)).toEqual(IDENTIFIERS);
    const redacted = (await r.app.call("GET", `/v1/transcriptions/${id}?redacted=true`, { key: r.tenant.test })).body;
    expect(leaks(redacted)).toEqual([]);
    expect(redacted.text).toContain("The pain started two weeks ago.");
    expect(redacted.text).toContain("[NAME]");
    expect(redacted.segments.map((s: { text: string }) => s.text).join(" ")).toContain("[PHONE]");
    expect(redacted.segments.length).toBe(plain.segments.length);

    const summaryId = (await r.app.call("GET", `/v1/summaries?transcription_id=${id}`, { key: r.tenant.test })).body.data[0].id;
    const summary = (await r.app.call("GET", `/v1/summaries/${summaryId}`, { key: r.tenant.test })).body;
    expect(leaks(summary).length).toBeGreaterThan(0); // the scripted model quotes the transcript
    const redactedSummary = (await r.app.call("GET", `/v1/summaries/${summaryId}?redacted=true`, { key: r.tenant.test })).body;
    expect(leaks(redactedSummary)).toEqual([]);
    expect(Object.keys(redactedSummary.structured).sort()).toEqual(Object.keys(summary.structured).sort());
  });

  test("redacted takes only true or false", async () => {
    const id = await r.transcribed();
    const bad = await r.app.call("GET", `/v1/transcriptions/${id}?redacted=yes`, { key: r.tenant.test });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("validation_error");
  });

  test("redact_webhook_payloads: transcription.completed and summary.completed carry redacted text; off by default", async () => {
    const before = await r.transcribed();
    const eventFor = (type: string, field: string, id: string) => eventsOf(r.app.deps, type).find((e) => e.data[field] === id)!;
    expect(leaks(eventFor("transcription.completed", "id", before).data).length).toBeGreaterThan(0);

    const put = await r.app.call("PUT", "/v1/config/project", { key: r.tenant.test, body: { redact_webhook_payloads: true } });
    expect(put.status).toBe(200);
    expect(put.body.effective.redact_webhook_payloads).toBe(true);
    const after = await r.transcribed();
    const completed = eventFor("transcription.completed", "id", after);
    expect(leaks(completed.data)).toEqual([]);
    expect(completed.data.text).toContain("[NAME]");
    expect(leaks(eventFor("summary.completed", "transcription_id", after).data)).toEqual([]);
    // The stored transcript itself is untouched.
    expect(leaks((await r.app.call("GET", `/v1/transcriptions/${after}`, { key: r.tenant.test })).body)).toEqual(IDENTIFIERS);
    await r.app.call("DELETE", "/v1/config/project", { key: r.tenant.test });
  });
});
