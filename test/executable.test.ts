// The appliance as an operator gets it (issue 15): the compiled executable copied alone into an
// empty folder, no checkout and no node_modules beside it, an empty PATH (so no ffmpeg), and the
// generated models in its models dir. A device's upload goes through verification,
// transcription, the automatic summary, search and Ask on the carried llama.cpp (decisions
// 090, 092). Random-weight models give random words: this checks that every engine runs.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ensureTestModels } from "../scripts/test-models/cache";
import { cachedTinyDiarizationModels } from "../scripts/test-models/onnx-diarization";
import { cachedTinyEmbedder } from "../scripts/test-models/onnx-embedder";
import { voicedBurst, wavBytes } from "./engines/signals";
import { makeTempDir, waitFor } from "./helpers";
import { freePort } from "./support/server-process";

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

test("the executable alone, with no ffmpeg, takes an upload through verification, transcription, summary, search and Ask", async () => {
  const root = join(import.meta.dir, "..");
  const built = join(makeTempDir(), "parley");
  expect(Bun.spawnSync([process.execPath, join(root, "scripts", "build.ts"), built], { cwd: root, stdout: "ignore", stderr: "pipe" }).exitCode).toBe(0);

  const dir = makeTempDir();
  const bin = join(dir, "parley");
  copyFileSync(built, bin);
  const modelsDir = join(dir, "models");
  mkdirSync(modelsDir);
  copyFileSync(ensureTestModels().whisper, join(modelsDir, "tiny-whisper.bin"));
  copyFileSync(ensureTestModels().gguf, join(modelsDir, "tiny-llama.gguf"));
  copyFileSync(ensureTestModels().parakeet, join(modelsDir, "tiny-parakeet.bin"));
  cpSync(join(cachedTinyEmbedder(), "tiny-embedder"), join(modelsDir, "tiny-embedder"), { recursive: true });
  // The neural diarizer's two models at their manifest paths: installed, it is chosen over the classic one.
  cpSync(cachedTinyDiarizationModels(), modelsDir, { recursive: true });
  const port = String(freePort());
  // The data and models dirs are the embedded defaults, ./data and ./models of the folder it runs in, as a newcomer has them.
  const env = {
    PATH: "",
    PARLEY_WHISPER_MODEL: join(modelsDir, "tiny-whisper.bin"),
    PARLEY_EMBEDDING_MODEL: "tiny-embedder",
    PARLEY_LLM_MODEL: join(modelsDir, "tiny-llama.gguf"),
    PARLEY_GPU: "off",
    PARLEY_PORT: port,
    PARLEY_LOG_LEVEL: "warn",
  };
  const run = (args: string[]) => Bun.spawnSync([bin, ...args], { cwd: dir, env, stderr: "pipe" });
  // doctor loads every engine from the runtime folder, the LLM included.
  const doctor = run(["doctor"]).stdout.toString();
  expect(doctor).toMatch(/^ok +llm +.*tiny-llama\.gguf on cpu$/m);
  expect(doctor).toMatch(/^ok +ask provider +llama_cpp/m);
  expect(doctor).toMatch(/^ok +diarization +neural /m);
  expect(run(["projects", "create", "clinic"]).exitCode).toBe(0);
  const key = JSON.parse(run(["keys", "create", "--project", "clinic", "--mode", "test", "--json"]).stdout.toString()).key as string;

  const server = Bun.spawn([bin, "serve"], { cwd: dir, env, stdout: "ignore", stderr: "pipe" });
  const base = `http://127.0.0.1:${port}`;
  let recordingId = "";
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${base}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  try {
    await waitFor(
      "the server up",
      () =>
        fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      30_000,
    );
    const endUser = await (await api("POST", "/end-users", {})).json();

    // The device's side: create, upload to the URL it is given, complete with the checksum.
    const bytes = wavBytes(voicedBurst(6, 0.5, 5.5));
    const rec = await (await api("POST", "/recordings", { end_user_id: endUser.id })).json();
    recordingId = rec.id;
    const url = (await (await api("POST", `/recordings/${rec.id}/upload-url`, {})).json()).upload_url;
    expect((await fetch(url, { method: "PUT", body: bytes })).status).toBe(200);
    const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
    const uploaded = await waitFor(
      "the upload verified",
      async () => {
        const r = await api("POST", `/recordings/${rec.id}/upload-complete`, completion);
        return r.status === 200 ? r.json() : null;
      },
      60_000,
    );
    // Verified, and already handed to the auto-transcription.
    expect(uploaded).toMatchObject({ format: "wav", sha256: completion.sha256, uploaded_at: expect.any(String) });

    const txn = await waitFor(
      "the transcription finished",
      async () => {
        const list = await (await api("GET", `/transcriptions?recording_id=${rec.id}`)).json();
        const t = list.data?.[0];
        return t && t.status !== "queued" && t.status !== "processing" ? t : null;
      },
      120_000,
    );
    expect(txn).toMatchObject({ status: "completed", error: null, diarization: "neural" });
    expect(txn.segments?.length ?? (await (await api("GET", `/transcriptions/${txn.id}`)).json()).segments.length).toBeGreaterThan(0);

    // The legal transcript on the face the executable carries (decision 156), certifying the model file's digest.
    const pdf = await api("GET", `/transcriptions/${txn.id}/export?format=pdf`);
    expect(pdf.status).toBe(200);
    await Bun.write(join(dir, "transcript.pdf"), await pdf.arrayBuffer());
    const certified = Bun.spawnSync(["pdftotext", join(dir, "transcript.pdf"), "-"]).stdout.toString();
    expect(certified).toContain("CERTIFICATION");
    expect(certified).toContain(sha256(await Bun.file(join(modelsDir, "tiny-whisper.bin")).bytes()));

    // The automatic summary, on llama.cpp with a schema grammar.
    const summary = await waitFor(
      "the summary finished",
      async () => {
        const s = (await (await api("GET", `/summaries?transcription_id=${txn.id}`)).json()).data?.[0];
        return s && s.status !== "queued" && s.status !== "processing" ? s : null;
      },
      120_000,
    );
    expect(summary).toMatchObject({ status: "completed", error: null });
    expect(Object.keys(summary.structured).sort()).toEqual(["action_items", "decisions", "key_points", "summary", "title"]);

    // Search: the query is embedded on the carried onnxruntime (random words from a random model: plumbing only).
    const search = await api("POST", "/recordings/search", { query: "the meeting", end_user_id: endUser.id });
    expect(search.status).toBe(200);
    expect(Array.isArray((await search.json()).results)).toBe(true);
    // The transcript's chunks were embedded (vec0 keeps its rows in a plain shadow table).
    const db = new Database(join(dir, "data", "parley.db"), { readonly: true });
    await waitFor("the transcript's vectors stored", () => db.query<{ n: number }, []>("SELECT count(*) AS n FROM chunk_vectors_rowids").get()!.n > 0, 60_000);
    db.close();

    // Ask on llama_cpp, the default provider, over the recording's transcript.
    const ask = await api("POST", "/ask/sessions", { scope: { type: "recording", recording_id: rec.id }, initial_message: { content: "What was said?" } });
    expect(ask.status).toBe(200);
    const answer = (await ask.json()).message;
    expect(answer).toMatchObject({ role: "assistant", provider: "llama_cpp" });
    expect(answer.tokens.input).toBeGreaterThan(0);

    // Every native file came from the runtime folder: onnxruntime (VAD, embeddings), whisper.cpp, sqlite-vec, llama.cpp.
    const runtime = join(dir, "data", "runtime", readdirSync(join(dir, "data", "runtime"))[0]!);
    for (const f of ["vec0.so", "onnxruntime/libonnxruntime.so.1", "silero_vad.onnx", "llama/linux-x64/llama-addon.node"])
      expect(existsSync(join(runtime, f))).toBe(true);
    expect(readdirSync(runtime).some((f) => f.startsWith("whisper-"))).toBe(true);
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
  // No engine fell back or failed on the way (the search answers without vectors if the embedder
  // fails), and node-llama-cpp warned of nothing (a binary it could not find or test).
  const stderr = await new Response(server.stderr).text();
  expect(stderr).not.toContain("embedder failed");
  expect(stderr).not.toContain("node-llama-cpp");

  // Parakeet (decision 181) rides in the same carried addon: the recording again, on the tiny Parakeet stand-in.
  const parakeet = Bun.spawn([bin, "serve"], {
    cwd: dir,
    env: { ...env, PARLEY_WHISPER_MODEL: join(modelsDir, "tiny-parakeet.bin") },
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    await waitFor(
      "the Parakeet server up",
      () =>
        fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      30_000,
    );
    const posted = await (await api("POST", "/transcriptions", { recording_id: recordingId, language: "en" })).json();
    const again = await waitFor(
      "the Parakeet transcription finished",
      async () => {
        const t = await (await api("GET", `/transcriptions/${posted.id}`)).json();
        return t.status !== "queued" && t.status !== "processing" ? t : null;
      },
      120_000,
    );
    expect(again).toMatchObject({ status: "completed", error: null, model: join(modelsDir, "tiny-parakeet.bin") });
    expect(again.segments.length).toBeGreaterThan(0);
  } finally {
    parakeet.kill("SIGTERM");
    await parakeet.exited;
  }
}, 420_000);
