// Stop signals on real `parley serve` processes. Once the local LLM has loaded (issue 31), the
// stop runs to its end, "parley stopped" is the last log line and the exit status is 0: it used
// to be 143 with the log ending at "parley stopping", as node-llama-cpp loads signal-exit, which
// re-sends the signal when its listeners are the only ones left. A second signal during the
// stop ends the process at once (decision 080).
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureTestModels } from "../../scripts/test-models/cache";
import { makeTempDir, waitFor } from "../helpers";
import { voicedBurst, wav } from "../modules/pipeline-fixtures";
import { sha256 } from "../modules/recordings-support";
import { apiClient, freePort, type ServerProcess, startServer } from "../support/server-process";
import { tricklingPut } from "../support/trickle";

/** The `msg` of each JSON log line, in order. */
const messages = (server: ServerProcess) =>
  server
    .stderr()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => (JSON.parse(l) as { msg: string }).msg);

/** The exit status, or "still running" after `ms`: a hang fails with the log rather than with the test's timeout. */
const exitWithin = (server: ServerProcess, ms: number) => Promise.race([server.proc.exited, Bun.sleep(ms).then(() => "still running")]);

/** A server with the tiny whisper and GGUF models, a recording uploaded with auto-transcription and auto-summary on. */
async function serverWithSummary() {
  const models = ensureTestModels();
  const dataDir = makeTempDir();
  const env = {
    PARLEY_DATA_DIR: dataDir,
    PARLEY_PORT: String(freePort()),
    PARLEY_WHISPER_MODEL: models.whisper,
    PARLEY_LLM_MODEL: models.gguf,
    PARLEY_GPU: "off",
    PARLEY_SHUTDOWN_GRACE_SECONDS: "2",
  };
  const server = await startServer(env);
  const api = await apiClient(env, server.base);
  const bytes = wav(voicedBurst(6, 0.5, 5.5));
  const rec = await (await api("POST", "/recordings", {})).json();
  const url = (await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url;
  expect((await fetch(url, { method: "PUT", body: bytes })).status).toBe(200);
  const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
  await waitFor("the upload verified", async () => (await api("POST", `/recordings/${rec.id}/upload-complete`, completion)).status === 200);
  const db = new Database(join(dataDir, "parley.db"), { readonly: true });
  const summaryJob = () =>
    db
      .query<{ state: string; attempts: number; last_error: string | null }, []>("SELECT state, attempts, last_error FROM jobs WHERE type = 'summaries.run'")
      .get();
  return { env, server, api, db, summaryJob };
}

test('SIGTERM after a summary on llama.cpp: exit 0 within the grace period, "parley stopped" last', async () => {
  const { server, db, summaryJob } = await serverWithSummary();
  await waitFor("the summary done", () => summaryJob()?.state === "done", 120_000);
  db.close();

  const signalledAt = Date.now();
  server.proc.kill("SIGTERM");
  expect(await exitWithin(server, 15_000)).toBe(0);
  expect(messages(server).slice(-2)).toEqual(["parley stopping", "parley stopped"]);
  // Grace 2 s, plus a margin for closing the queue and the database.
  expect(Date.now() - signalledAt).toBeLessThan(2000 + 3000);
}, 300_000);

test('SIGTERM while the summary runs on llama.cpp: its job goes back to the queue (decision 080), exit 0, "parley stopped" last', async () => {
  const { env, server, db, summaryJob } = await serverWithSummary();
  await waitFor("the summary job running", () => summaryJob()?.state === "running", 120_000);
  server.proc.kill("SIGTERM");
  expect(await exitWithin(server, 15_000)).toBe(0);
  expect(messages(server).at(-1)).toBe("parley stopped");
  // Put back unfinished (queued, the attempt not counted), unless it finished before the abort reached it.
  const job = summaryJob()!;
  if (job.state === "done") expect(job.attempts).toBe(1);
  else expect(job).toEqual({ state: "queued", attempts: 0, last_error: null });

  const again = await startServer(env);
  await waitFor("the summary done after the restart", () => summaryJob()?.state === "done", 120_000);
  db.close();
  again.proc.kill("SIGTERM");
  expect(await exitWithin(again, 15_000)).toBe(0);
}, 300_000);

test("a second SIGTERM during the stop ends the process at once, without waiting for the grace period", async () => {
  const env = { PARLEY_DATA_DIR: makeTempDir(), PARLEY_PORT: String(freePort()), PARLEY_SHUTDOWN_GRACE_SECONDS: "60" };
  const server = await startServer(env);
  const api = await apiClient(env, server.base);
  const rec = await (await api("POST", "/recordings", {})).json();
  // An upload in flight holds the stop for the whole grace period.
  const put = tricklingPut((await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url);
  const tmp = join(env.PARLEY_DATA_DIR, "audio", ".tmp");
  await waitFor(
    "the upload's first bytes on disk",
    () =>
      existsSync(tmp) && readdirSync(tmp, { recursive: true, withFileTypes: true }).some((d) => d.isFile() && statSync(join(d.parentPath, d.name)).size > 0),
  );
  server.proc.kill("SIGTERM");
  await waitFor("the stop under way", () => messages(server).includes("parley stopping"));
  const signalledAt = Date.now();
  server.proc.kill("SIGTERM");
  expect(await exitWithin(server, 15_000)).toBe(143);
  expect(Date.now() - signalledAt).toBeLessThan(5000);
  expect(messages(server).at(-1)).toBe("second signal during the stop: exiting at once");
  put.stop();
  await put.status;
}, 60_000);
