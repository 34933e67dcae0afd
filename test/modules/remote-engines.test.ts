import { afterAll, describe, expect, test } from "bun:test";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { makeTenant, makeTestApp } from "../helpers";
import { startOpenAiCompatibleDouble } from "../support/openai-compatible-server";
import { voiced, wavFixture } from "./pipeline-fixtures";
import { uploadedRecording } from "./recordings-support";

// The app's real jobs against the OpenAI-compatible test double (remote HTTP); the transcriber
// is scripted here (whisper-server has its own test), the local LLM is not installed, so
// anything a model answered came from the remote server.
const server = startOpenAiCompatibleDouble({ dimension: 8 });
afterAll(() => server.stop());

/** A value of the request's JSON schema, as the scripted LLM writes one, so summaries pass their checks. */
const schemaAnswer = async (body: any) =>
  (await new ScriptedLlm().complete({ messages: body.messages, jsonSchema: body.response_format?.json_schema?.schema })).text;

const remoteEnv = {
  PARLEY_LLM: "openai_compatible",
  PARLEY_OPENAI_BASE_URL: server.url,
  PARLEY_OPENAI_MODEL: "served-llm",
  PARLEY_EMBEDDER: "openai_compatible",
  PARLEY_EMBEDDER_BASE_URL: server.url,
  PARLEY_EMBEDDER_MODEL: "served-embedder",
  PARLEY_REMOTE_RETRY_DELAYS_MS: "10,10",
};

async function remoteApp(env: Record<string, string> = {}) {
  server.requests.length = 0;
  server.failures = [];
  server.failOn = "/v1/chat/completions";
  server.dimension = 8;
  server.answers = [schemaAnswer];
  const transcriber = new ScriptedTranscriber({
    segments: () => [{ start: 0, end: 3, text: " Call Zyanya Quispe about the quarterly budget.", confidence: 0.9 }],
  });
  const t = await makeTestApp({ engines: { transcriber, diarizer: new SingleSpeakerDiarizer() }, env: { ...remoteEnv, ...env } });
  const tenant = makeTenant(t.deps);
  const upload = async () => {
    const { recording } = await uploadedRecording(t, tenant.test, wavFixture(voiced(3)));
    await t.deps.queue.drain();
    const [txn] = (await t.call("GET", `/v1/transcriptions?recording_id=${recording.id}`, { key: tenant.test })).body.data;
    const [summary] = (await t.call("GET", `/v1/summaries?transcription_id=${txn.id}`, { key: tenant.test })).body.data;
    return { recording, txn, summary };
  };
  const chats = () => server.requests.filter((r) => r.path === "/v1/chat/completions");
  return { t, tenant, upload, chats };
}

describe("remote engines in the app's jobs", () => {
  test("PARLEY_LLM=openai_compatible: the summary is the remote server's; redaction's pass does not go there by default", async () => {
    const { t, upload, chats } = await remoteApp();
    const { summary } = await upload();
    expect(summary).toMatchObject({ status: "completed", model: "served-llm" });
    expect(chats().map((r) => r.body.model)).toEqual(["served-llm"]);
    // Transcripts' identifiers stay on the box: no pass was queued for the remote model.
    expect(t.deps.db.query("SELECT COUNT(*) AS n FROM jobs WHERE type = 'transcriptions.redaction_pass'").get()).toEqual({ n: 0 });
  });

  test("PARLEY_REDACTION_LLM=openai_compatible opts redaction's pass in to the remote server", async () => {
    const { upload, chats } = await remoteApp({ PARLEY_REDACTION_LLM: "openai_compatible" });
    await upload();
    expect(chats()).toHaveLength(2);
    expect(chats().some((r) => JSON.stringify(r.body.messages).includes("Zyanya Quispe"))).toBe(true);
  });

  test("a server that keeps answering 500 fails the summary as processing_error naming the status, after the retries", async () => {
    const { upload, chats } = await remoteApp();
    server.failures = [500, 500, 500];
    const { summary } = await upload();
    expect(summary.status).toBe("failed");
    expect(summary.error.code).toBe("processing_error");
    expect(summary.error.message).toContain(`The LLM server at ${server.url} answered 500`);
    expect(summary.error.message).toContain("(3 attempts)");
    expect(chats()).toHaveLength(3);
  });

  test("the remote embedder's vectors are indexed; vectors of another length fail the index job by name and store nothing", async () => {
    const { t, upload } = await remoteApp();
    const vectors = () => (t.deps.db.query("SELECT COUNT(*) AS n FROM chunk_vectors").get() as { n: number }).n;
    await upload();
    expect(vectors()).toBe(1);
    expect(t.deps.db.query("SELECT model, dimension FROM search_index").get()).toMatchObject({ model: "served-embedder", dimension: 8 });

    server.dimension = 12; // the server's model was swapped behind Parley's back
    await upload();
    expect(vectors()).toBe(1);
    const job = t.deps.db.query("SELECT last_error FROM jobs WHERE type = 'search.index_transcription' ORDER BY created_at DESC, rowid DESC LIMIT 1").get() as {
      last_error: string;
    };
    expect(job.last_error).toContain("returned vectors of 12 numbers for served-embedder; the search index holds 8");
  });
});
