// `parley simulate` streaming (issue 30, item 3): a simulated wearable streams its spoken
// sample while it records, so the live transcript grows before the upload completes. A real
// server on loopback with the real pipeline (ffmpeg, Silero VAD, whisper on the tiny model).
import { afterAll, describe, expect, test } from "bun:test";
import { ensureTestModels } from "../scripts/test-models/cache";
import { createApp } from "../src/app";
import { registerBackgroundWork } from "../src/background";
import { systemClock } from "../src/clock";
import { WhisperTranscriber } from "../src/engines/whisper-transcriber";
import { UsageError } from "../src/cli/args";
import { startSimulation, streamFlag } from "../src/simulator";
import { oggOpusSeconds, pickSample, readSample } from "../src/simulator/samples";
import { makeTenant, makeTestDeps, waitFor } from "./helpers";
import { freePort } from "./support/server-process";

type Sse = { event: string; data: any };

/** Reads Server-Sent Events from `res` until the stream ends, calling `seen` on each. */
async function readEvents(res: Response, seen: (e: Sse) => Promise<void>): Promise<Sse[]> {
  const events: Sse[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    buffer += decoder.decode(r.value, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = block.match(/^event: (.*)$/m)?.[1];
      if (!event) continue;
      const e = { event, data: JSON.parse(block.match(/^data: (.*)$/m)![1]!) };
      events.push(e);
      await seen(e);
    }
  }
  return events;
}

describe("parley simulate --speed", () => {
  const stops: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  test("the wearable streams its conversation in chunks: provisional segments before upload-complete, then the same transcription completes", async () => {
    const port = freePort();
    // The random-weight model never clears whisper's log-probability threshold: without the
    // temperature fallback each call is one decode, not six (as in speech-plan.test.ts).
    const transcriber = new WhisperTranscriber({ model: "tiny", path: ensureTestModels().whisper, gpu: "off", threads: 1, decoding: { temperatureInc: 0 } });
    const deps = await makeTestDeps({
      clock: systemClock,
      engines: { transcriber },
      env: { PARLEY_PORT: String(port), PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "0" },
    });
    const tenant = makeTenant(deps, "streamed");
    registerBackgroundWork(deps);
    deps.queue.start();
    const app = createApp(deps).listen({ port, hostname: "127.0.0.1" });
    stops.push(async () => void (await app.stop()));
    const base = `http://127.0.0.1:${port}`;
    const api = async (path: string) => (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${tenant.test}` } })).json() as Promise<any>;
    await fetch(`${base}/v1/config/project`, {
      method: "PUT",
      headers: { authorization: `Bearer ${tenant.test}`, "content-type": "application/json" },
      body: JSON.stringify({ auto_summarize: false }),
    });

    // Twice real time: the ~30 s conversation streams in ~16 s, one chunk per 2 s of audio (time enough for a busy box to commit a segment while it streams).
    const pace = { speed: 2, chunkSeconds: 2 };
    const announced: string[] = [];
    const said: string[] = [];
    const sim = await startSimulation({
      log: (line) => said.push(line),
      url: base,
      apiKey: tenant.test,
      devices: 1,
      durationSeconds: 0,
      intervalSeconds: 0.5,
      uploads: true,
      recordAtOnce: true,
      stream: pace,
      onStream: (id, sample) => announced.push(`${sample.name} ${id}`),
    });
    stops.push(async () => {
      sim.stop();
      await sim.done;
    });
    const device = sim.devices[0]!;
    expect(said.some((line) => line.endsWith(": 1 device bound"))).toBe(true);

    const recording = await waitFor("the streaming recording", async () => (await api(`/v1/recordings?device_id=${device.id}`)).data?.[0]);
    const transcription = await waitFor("its live transcription", async () => (await api(`/v1/transcriptions?recording_id=${recording.id}`)).data?.[0]);
    expect(transcription.status).toBe("processing");
    expect(announced[0]).toBe(`${pickSample(0, 0).name} ${recording.id}`);

    // While each segment arrives, what state is the recording in?
    const statesAtSegments: string[] = [];
    const live = await fetch(`${base}/v1/transcriptions/${transcription.id}/live`, { headers: { authorization: `Bearer ${tenant.test}` } });
    expect(live.status).toBe(200);
    const events = await readEvents(live, async (e) => {
      if (e.event === "segment") statesAtSegments.push((await api(`/v1/recordings/${recording.id}`)).status);
    });

    // The transcript grew while the device was still streaming: upload-complete had not been accepted yet.
    expect(statesAtSegments).toContain("streaming");
    expect(events.at(-1)).toMatchObject({ event: "completed", data: { id: transcription.id, status: "completed" } });
    const segments = events.filter((e) => e.event === "segment").map((e) => e.data);
    expect(segments.map((s) => s.seq)).toEqual(segments.map((_, i) => i + 1));

    // Every chunk went as the device cut them, and the verified file is the sample, byte for byte.
    const audio = await readSample(pickSample(0, 0));
    const done = await api(`/v1/recordings/${recording.id}`);
    expect(done).toMatchObject({ status: "completed", is_streaming: true, chunk_count: Math.ceil(oggOpusSeconds(audio) / pace.chunkSeconds) });
    expect(done.sha256).toBe(new Bun.CryptoHasher("sha256").update(audio).digest("hex"));
    expect(sim.stats).toMatchObject({ uploadErrors: 0 });
    expect(sim.stats.chunksStreamed).toBeGreaterThanOrEqual(done.chunk_count);
  }, 60_000);
});

describe("--speed and --no-stream", () => {
  test("real time by default, compressed by --speed, none with --no-stream; nonsense is a usage error", () => {
    expect(streamFlag({}, "usage")).toEqual({ speed: 1, chunkSeconds: 2 });
    expect(streamFlag({ speed: "4" }, "usage")).toEqual({ speed: 4, chunkSeconds: 2 });
    expect(streamFlag({ "no-stream": true }, "usage")).toBeUndefined();
    for (const bad of [{ speed: "0" }, { speed: "fast" }, { speed: "2", "no-stream": true }]) expect(() => streamFlag(bad, "usage")).toThrow(UsageError);
  });
});
