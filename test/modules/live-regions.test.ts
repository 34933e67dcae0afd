// When a live pass counts a speech region as over (decision 210): at the end of what arrived,
// a region whose speech stopped at least CLOSING_QUIET_SECONDS before is closed there, instead
// of waiting for the next chunk to show the VAD's whole 0.8 s of hysteresis.
import { describe, expect, test } from "bun:test";
import { SileroVad } from "../../src/engines/vad";
import { CLOSING_QUIET_SECONDS, closedRegions, PAD_SECONDS, quietUntil } from "../../src/modules/live/regions";
import { liveApp, liveSegments, transcriptionOf } from "./live-support";
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

describe("a region closed at the end of a chunk (decision 210)", () => {
  test("is transcribed in that chunk's pass; the speaker going on after the pause is a new region, each heard once", async () => {
    const { t, tenant } = await liveApp();
    // Two utterances 0.7 s apart: one region over the whole file (under the VAD's 0.8 s of hysteresis).
    const bytes = wav(concat(voiced(2), silence(0.7), voiced(2), silence(1.5)));
    const cut = 44 + 2.6 * 16_000 * 2; // chunk 0 ends 0.6 s after the first utterance
    const rec = await createRecording(t, tenant.test);
    await put(t, tenant.test, rec.id, bytes.slice(0, cut), { chunk_index: 0 });
    await t.deps.queue.drain();
    const txn = await transcriptionOf(t, tenant.test, rec.id);
    expect(liveSegments(t, txn.id).map((s) => s.text)).toEqual(["utterance 1"]);

    await put(t, tenant.test, rec.id, bytes.slice(cut), { chunk_index: 1 });
    await t.deps.queue.drain();
    const live = liveSegments(t, txn.id);
    expect(live.map((s) => s.text)).toEqual(["utterance 1", "utterance 2"]);
    expect(live[0]!.end).toBeLessThan(2.6);
    expect(live[1]!.start).toBeGreaterThan(2.6);

    await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: tenant.test, body: { sha256: sha256(bytes) } });
    await t.deps.queue.drain();
    const done = (await t.call("GET", `/v1/transcriptions/${txn.id}`, { key: tenant.test })).body;
    expect(done.status).toBe("completed");
    expect(done.segments.map((s: { text: string }) => s.text)).toEqual(["utterance 1", "utterance 2"]);
  });
});
