import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { cachedTinyEmbedder } from "../../scripts/test-models/onnx-embedder";
import { wavBytes } from "../../test/engines/signals";
import { benchApi, startBenchServer } from "./bench-server";

/**
 * Upload-complete to searchable on a real server (`parley serve` in a child process): a
 * recording of `pcm` for an end user is uploaded and completed; then the transcription is
 * awaited, and the search for a word of its first segment until it finds the recording.
 * The time is from the upload-complete request to the first search that finds it.
 */
export async function uploadToSearchable(
  work: string,
  pcm: Float32Array,
  models: { whisper: string; gguf: string },
): Promise<{ ms: number; transcribedMs: number }> {
  const modelsDir = join(work, "models");
  mkdirSync(modelsDir, { recursive: true });
  cpSync(join(cachedTinyEmbedder(), "tiny-embedder"), join(modelsDir, "tiny-embedder"), { recursive: true });
  const { port, key, server } = await startBenchServer(work, {
    PARLEY_MODELS_DIR: modelsDir,
    PARLEY_EMBEDDING_MODEL: "tiny-embedder",
    PARLEY_WHISPER_MODEL: models.whisper,
    PARLEY_LLM_MODEL: models.gguf,
    PARLEY_GPU: "off",
    // A long clip on a busy 2-core box must not hit the job time limit.
    PARLEY_PROCESSING_MIN_SECONDS: "7200",
  });
  try {
    const call = benchApi(port, key);
    const endUser = (await call("POST", "/end-users", {})).id as string;
    const rec = await call("POST", "/recordings", { end_user_id: endUser });
    const url = await call("POST", `/recordings/${rec.id}/upload-url`, { content_type: "audio/wav" });
    const put = await fetch(url.upload_url.replace(/^https?:\/\/[^/]+/, `http://127.0.0.1:${port}`), {
      method: "PUT",
      headers: { "content-type": "audio/wav" },
      body: wavBytes(pcm),
    });
    if (put.status !== 200) throw new Error(`PUT: ${put.status} ${await put.text()}`);
    const t0 = performance.now();
    await call("POST", `/recordings/${rec.id}/upload-complete`, {});
    let word: string | null = null;
    let transcribedMs = 0;
    // Polled, not slept on: each poll is a real request, and the wait ends when the state is reached.
    while (!word) {
      const txn = (await call("GET", `/transcriptions?recording_id=${rec.id}`)).data?.[0];
      if (txn?.status === "failed") throw new Error(`transcription failed: ${JSON.stringify(txn.error)}`);
      if (txn?.status === "completed") {
        word =
          String(txn.segments[0]?.text ?? "")
            .split(/\s+/)
            .find((w: string) => /\w{2,}/.test(w)) ?? null;
        transcribedMs = performance.now() - t0;
        if (!word) throw new Error("the transcript has no word to search for");
      } else await Bun.sleep(100);
    }
    for (;;) {
      const found = (await call("POST", "/recordings/search", { query: word, end_user_id: endUser })).results as { recording_id: string }[];
      if (found.some((r) => r.recording_id === rec.id)) return { ms: performance.now() - t0, transcribedMs };
      await Bun.sleep(50);
    }
  } finally {
    server.kill();
    await server.exited;
  }
}
