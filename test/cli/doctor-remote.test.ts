import { afterAll, expect, test } from "bun:test";
import { diagnose } from "../../src/cli/doctor";
import { loadConfig } from "../../src/config";
import { makeTempDir } from "../helpers";
import { startOpenAiCompatibleDouble } from "../support/openai-compatible-server";

const server = startOpenAiCompatibleDouble({ dimension: 16 });
afterAll(() => server.stop());

test("doctor asks each remote engine with a real call, reports its model and latency, and names a server that does not answer", async () => {
  const dir = makeTempDir();
  const config = loadConfig({
    PARLEY_DATA_DIR: dir,
    PARLEY_MODELS_DIR: `${dir}/models`,
    PARLEY_GPU: "off",
    PARLEY_TRANSCRIBER: "openai_compatible",
    // Nothing listens on port 1: the check fails at once, naming the server (no retries in doctor).
    PARLEY_TRANSCRIBER_BASE_URL: "http://127.0.0.1:1/v1",
    PARLEY_EMBEDDER: "openai_compatible",
    PARLEY_EMBEDDER_BASE_URL: server.url,
    PARLEY_EMBEDDER_MODEL: "served-embedder",
    PARLEY_LLM: "openai_compatible",
    PARLEY_ASK_PROVIDER: "openai_compatible",
    PARLEY_OPENAI_BASE_URL: server.url,
    PARLEY_OPENAI_MODEL: "served-llm",
  });
  const checks = await diagnose(config);
  const named = (name: string) => checks.filter((c) => c.check === name);
  expect(named("transcriber")).toEqual([
    {
      check: "transcriber",
      ok: false,
      detail: expect.stringMatching(/^whisper-1 at http:\/\/127\.0\.0\.1:1\/v1: The transcription server .* could not be reached .*\(1 attempt\)\.$/),
    },
  ]);
  expect(named("embedder")).toEqual([
    { check: "embedder", ok: true, detail: expect.stringMatching(/^served-embedder at .*: answered in \d+ ms \(16 dimensions\)$/) },
  ]);
  expect(named("remote llm")).toEqual([
    {
      check: "remote llm",
      ok: true,
      detail: expect.stringMatching(/^served-llm at .*: answered in \d+ ms \(5 token\(s\); used for summaries, Ask's openai_compatible provider\)$/),
    },
  ]);
  // The local models these engines replace are not asked for.
  expect(checks.map((c) => c.check)).not.toContain("transcriber model");
  expect(checks.map((c) => c.check)).not.toContain("llm");
  expect(server.requests.map((r) => r.path)).toEqual(["/v1/embeddings", "/v1/chat/completions"]);
});
