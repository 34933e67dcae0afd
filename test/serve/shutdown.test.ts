// SIGTERM with a deadline (decision 080), on real processes: a slow upload is cut off at the
// end of the grace period and leaves nothing behind, and a transcription running at SIGTERM is
// put back in the queue, never failed, and completes after the restart.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { makeTempDir, waitFor } from "../helpers";
import { voicedBurst, wav } from "../modules/pipeline-fixtures";
import { sha256 } from "../modules/recordings-support";
import { apiClient, freePort, startServer } from "../support/server-process";
import { tricklingPut } from "../support/trickle";

/** Files under `dir`, recursively. */
const filesUnder = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));

test("SIGTERM mid-upload: the trickling PUT is cut off after the grace period, unacknowledged, and leaves no audio", async () => {
  const dataDir = makeTempDir();
  const env = { PARLEY_DATA_DIR: dataDir, PARLEY_PORT: String(freePort()), PARLEY_SHUTDOWN_GRACE_SECONDS: "1" };
  const server = await startServer(env);
  const api = await apiClient(env, server.base);
  const rec = await (await api("POST", "/recordings", {})).json();
  const url = (await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url;

  const put = tricklingPut(url);
  const tmp = join(dataDir, "audio", ".tmp");
  await waitFor("the upload's first bytes on disk", () => filesUnder(tmp).some((f) => statSync(f).size > 0));

  const signalledAt = Date.now();
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  // Grace 1 s, plus a margin for closing the connection, the queue and the database.
  expect(Date.now() - signalledAt).toBeLessThan(1000 + 3000);
  put.stop();
  const answer = await put.status;
  expect(answer === 200 || answer === 201).toBe(false);
  expect(server.stderr()).toContain("cut off");

  const again = await startServer(env);
  const after = await (await api("GET", `/recordings/${rec.id}`)).json();
  expect(after).toMatchObject({ status: "pending", file_size_bytes: null, sha256: null });
  // Nothing under the recording's keys: at most the temp file of the cut-off write.
  expect(filesUnder(join(dataDir, "audio")).filter((f) => !f.startsWith(tmp))).toEqual([]);
  again.proc.kill("SIGTERM");
  expect(await again.proc.exited).toBe(0);
});

test("SIGTERM mid-transcription: the job goes back to the queue, the transcription never fails, and it completes after the restart", async () => {
  const dataDir = makeTempDir();
  const env = { PARLEY_DATA_DIR: dataDir, PARLEY_PORT: String(freePort()), PARLEY_WHISPER_MODEL: ensureTestModels().whisper, PARLEY_GPU: "off" };
  const server = await startServer(env);
  const api = await apiClient(env, server.base);
  await api("PUT", "/config/project", { auto_summarize: false });

  // Upload with auto-transcription on: one 30 s whisper window, which the tiny random-weight
  // model decodes for several seconds on a CI core.
  const bytes = wav(voicedBurst(20, 0.5, 19.5));
  const rec = await (await api("POST", "/recordings", {})).json();
  const url = (await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url;
  expect((await fetch(url, { method: "PUT", body: bytes })).status).toBe(200);
  const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
  await waitFor("the upload verified", async () => (await api("POST", `/recordings/${rec.id}/upload-complete`, completion)).status === 200);

  const db = new Database(join(dataDir, "parley.db"), { readonly: true });
  const job = () =>
    db
      .query<{ state: string; attempts: number; last_error: string | null }, []>(
        "SELECT state, attempts, last_error FROM jobs WHERE type = 'transcriptions.run'",
      )
      .get();
  await waitFor("the transcription job running", () => job()?.state === "running");
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);
  expect(server.stderr()).toContain("job interrupted by shutdown");

  // Put back as never taken: queued, the attempt not counted, no error recorded.
  expect(job()).toEqual({ state: "queued", attempts: 0, last_error: null });
  const transcriptionId = db.query<{ id: string }, []>("SELECT id FROM transcriptions").get()!.id;
  const status = () => db.query<{ status: string }, [string]>("SELECT status FROM transcriptions WHERE id = ?").get(transcriptionId)!.status;
  expect(status()).toBe("processing");

  const again = await startServer(env);
  await waitFor("the transcription completed after the restart", () => status() !== "processing", 120_000);
  const txn = await (await api("GET", `/transcriptions/${transcriptionId}`)).json();
  expect(txn).toMatchObject({ status: "completed", error: null });
  expect(db.query("SELECT type FROM events WHERE type LIKE 'transcription.%' ORDER BY created_at, id").all()).toEqual([
    { type: "transcription.started" },
    { type: "transcription.completed" },
  ]);
  expect(job()).toMatchObject({ state: "done", attempts: 1 });
  db.close();
  again.proc.kill("SIGTERM");
  expect(await again.proc.exited).toBe(0);
}, 180_000);
