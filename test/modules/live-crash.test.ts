// kill -9 of a real server while devices stream chunks and live transcription runs (issue 30,
// item 4): the clients re-send what was not acknowledged, and at the end no chunk is lost (the
// verified file is the device's, byte for byte), no provisional segment is repeated (seqs run
// 1..n, no two segments overlap), live work was not abandoned, and every transcription completes.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { ApiClient } from "../../src/simulator/client";
import { oggOpusSeconds, readSample, SPEECH_SAMPLES } from "../../src/simulator/samples";
import { type StreamedRecording, streamRecording } from "../../src/simulator/stream";
import { makeTempDir, waitFor } from "../helpers";
import { freePort, parley } from "../support/server-process";

const BUN = process.execPath;
const ENTRY = join(import.meta.dir, "..", "..", "scripts", "test-models", "serve-greedy.ts");
const dataDir = makeTempDir("parley-live-crash-");
const port = freePort();
const env = {
  PATH: process.env.PATH ?? "",
  PARLEY_DATA_DIR: dataDir,
  PARLEY_MODELS_DIR: makeTempDir(),
  PARLEY_WHISPER_MODEL: ensureTestModels().whisper,
  PARLEY_PORT: String(port),
  PARLEY_LOG_LEVEL: "silent",
  PARLEY_RATE_LIMIT_PER_SECOND: "0",
  PARLEY_RATE_LIMIT_PER_MINUTE: "0",
};
const api = new ApiClient(`http://127.0.0.1:${port}`);

let server: ReturnType<typeof Bun.spawn> | null = null;
let db: Database | null = null;
afterAll(() => {
  server?.kill(9);
  db?.close();
});

async function start(): Promise<void> {
  const proc = Bun.spawn([BUN, ENTRY, "--threads", "1"], { env, stdout: "ignore", stderr: "ignore" });
  server = proc;
  await waitFor(
    "the server to answer",
    async () => {
      if (proc.exitCode !== null) throw new Error(`server exited ${proc.exitCode}`);
      return fetch(`${api.baseUrl}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    },
    60_000,
  );
}

async function kill9(): Promise<void> {
  server!.kill(9);
  await server!.exited;
  server = null;
}

/** The server's database, read beside it (WAL: a reader never blocks the writer). */
const query = <T>(sql: string, ...params: string[]): T[] => {
  db ??= new Database(join(dataDir, "parley.db"), { readonly: true });
  return db.query(sql).all(...params) as T[];
};
const segmentCount = () => query<{ n: number }>("SELECT count(*) AS n FROM live_segments")[0]!.n;
const liveJobRunning = () => query<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE type = 'live.transcribe' AND state = 'running'")[0]!.n > 0;

test("kill -9 while three devices stream and live jobs run: 0 lost chunks, 0 repeated segments, every transcription completes", async () => {
  await parley(["projects", "create", "chaos"], env);
  const key = JSON.parse((await parley(["keys", "create", "--project", "chaos", "--mode", "test", "--json"], env)).stdout).key as string;
  await start();
  await api.must("PUT", "/v1/config/project", key, { auto_summarize: false });

  // Three conversations of ~30 s at twice real time, a chunk per 2 s of audio: ~15 s of streaming each.
  const pace = { speed: 1.5, chunkSeconds: 2 };
  let acknowledged = 0;
  let streaming = true;
  const samples = SPEECH_SAMPLES.slice(0, 3);
  const audios = await Promise.all(samples.map(readSample));
  const streams = Promise.all(
    audios.map((audio, i) =>
      streamRecording(api, key, audio, oggOpusSeconds(audio), { mime_type: samples[i]!.mimeType, name: samples[i]!.name }, pace, {
        onChunk: () => void acknowledged++,
        patienceMs: 120_000,
      }),
    ),
  ).finally(() => (streaming = false));

  // Up to four kills at random moments. Before each, the (re)started server has committed a
  // new provisional segment: live work resumes after every restart, and a kill never comes so
  // soon that no pass could finish. Then the moment: just after a chunk was acknowledged, or
  // while a live pass runs (decoding, whisper mid-call, or committing).
  const kills: string[] = [];
  for (let round = 0; round < 4 && streaming; round++) {
    const before = segmentCount();
    await waitFor("a segment committed since the restart", () => !streaming || segmentCount() > before, 60_000);
    const seen = acknowledged;
    await waitFor("the moment to kill", () => !streaming || (round % 2 ? liveJobRunning() : acknowledged > seen), 60_000);
    if (!streaming) break;
    await Bun.sleep(Math.random() * 300);
    kills.push(new Date().toISOString());
    await kill9();
    await start();
  }
  const done: StreamedRecording[] = await streams;
  // One more in the completion: while a whole-file run (the live transcription's completion) works.
  const completing = () => query<{ n: number }>("SELECT count(*) AS n FROM jobs WHERE type = 'transcriptions.run' AND state = 'running'")[0]!.n > 0;
  const settled = () => query<{ n: number }>("SELECT count(*) AS n FROM transcriptions WHERE status = 'processing'")[0]!.n === 0;
  if (await waitFor("a completion running", () => completing() || settled(), 60_000).then(completing)) {
    await kill9();
    await start();
  }
  // Two kills at least: then segments were committed before the first and between the two.
  expect(kills.length).toBeGreaterThanOrEqual(2);

  for (const [i, rec] of done.entries()) {
    // 0 lost chunks: every chunk the device cut arrived, and the verified file is its file.
    expect(rec.chunks).toBe(Math.ceil(oggOpusSeconds(audios[i]!) / pace.chunkSeconds));
    expect(rec.sha256).toBe(createHash("sha256").update(audios[i]!).digest("hex"));
    const stored = await api.must("GET", `/v1/recordings/${rec.recordingId}`, key);
    expect({ chunk_count: stored.chunk_count, sha256: stored.sha256 }).toEqual({ chunk_count: rec.chunks, sha256: rec.sha256 });
    const audio = await fetch(`${api.baseUrl}/v1/recordings/${rec.recordingId}/audio`, { headers: { authorization: `Bearer ${key}` } });
    expect(
      createHash("sha256")
        .update(new Uint8Array(await audio.arrayBuffer()))
        .digest("hex"),
    ).toBe(rec.sha256);

    // Every transcription completes: one per recording, the live one, not a second started after a restart.
    const transcription = await waitFor(
      `the transcription of ${rec.recordingId} completed`,
      async () => {
        const list = (await api.must("GET", `/v1/transcriptions?recording_id=${rec.recordingId}`, key)).data;
        if (list.length !== 1) throw new Error(`${list.length} transcriptions of one recording`);
        if (list[0].status === "failed") throw new Error(`transcription failed: ${JSON.stringify(list[0].error)}`);
        return list[0].status === "completed" ? list[0] : null;
      },
      90_000,
    );

    // 0 repeated provisional segments: seqs 1..n, and each starts where the one before ended or later.
    const segments = query<{ seq: number; start: number; end: number; created_at: string }>(
      'SELECT seq, start, "end", created_at FROM live_segments WHERE transcription_id = ? ORDER BY seq',
      transcription.id,
    );
    expect(segments.map((s) => s.seq)).toEqual(segments.map((_, k) => k + 1));
    for (let k = 1; k < segments.length; k++) expect(segments[k]!.start).toBeGreaterThanOrEqual(segments[k - 1]!.end);
    // Live work went on through the kills, never given up (waiting would say why). How far it
    // got before completion is the box's pace: a busy one transcribes more at completion.
    const [progress] = query<{ waiting: string | null }>("SELECT waiting FROM live_progress WHERE transcription_id = ?", transcription.id);
    expect(progress).toEqual({ waiting: null });
  }
  // The live work resumed after each kill from where it was: segments committed before and after them, none repeated.
  const created = query<{ created_at: string }>("SELECT created_at FROM live_segments").map((s) => s.created_at);
  expect(created.some((c) => c < kills[0]!) && created.some((c) => c > kills[0]! && c < kills[1]!)).toBe(true);
  // No job that carries a recording to completion gave up. (A live pass killed on each of its
  // attempts is buried by the queue; the next chunk's pass, or the completion, does its work.)
  expect(query<{ type: string }>("SELECT type FROM jobs WHERE state = 'dead' AND type NOT LIKE 'live.%'")).toEqual([]);
  await kill9();
}, 180_000);
