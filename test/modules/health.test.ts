import { describe, expect, test } from "bun:test";
import pkg from "../../package.json";
import { runningCli } from "../../src/runtime/cli-name";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { fanOutEvents } from "../../src/modules/webhooks/delivery-store";
import { makeTenant, makeTestApp, waitFor } from "../helpers";
import { concat, silence, voiced, wavFixture } from "./pipeline-fixtures";
import { uploadedRecording } from "./recordings-support";

describe("GET /v1/health", () => {
  test("without a key: version, database, free space, each engine's model with the command that installs it, queue depth and oldest job age", async () => {
    const t = await makeTestApp();
    const tenant = makeTenant(t.deps);
    t.deps.queue.enqueue("search.reindex", {});
    t.clock.advance(30_000);
    const res = await t.call("GET", "/v1/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "degraded",
      version: pkg.version,
      database: { ok: true },
      queue: { queued: 1, running: 0, dead: 0, oldest_age_seconds: 30 },
    });
    expect(res.body.storage.map((v: { volume: string }) => v.volume)).toContain("database");
    // Said as parley runs here: `npm run parley --` in a checkout, as doctor says it (decision 121).
    const cli = runningCli();
    expect(res.body.models).toEqual([
      { engine: "transcriber", model: "whisper-base.en", status: "missing", install: `${cli} models pull whisper-base.en` },
      { engine: "llm", model: "qwen2.5-1.5b-instruct-q4_0", status: "missing", install: `${cli} models pull qwen2.5-1.5b-instruct-q4_0` },
      { engine: "embedder", model: "all-minilm-l6-v2", status: "missing", install: `${cli} models pull all-minilm-l6-v2` },
      { engine: "vad", model: "silero-vad", status: "bundled", install: null },
    ]);
    // Public: no path of the box, no project, no key.
    const text = JSON.stringify(res.body);
    for (const secret of [t.deps.config.dataDir, tenant.project.id, tenant.test]) expect(text).not.toContain(secret);
  });

  test("an operator's own model file that is missing: where it goes by the setting that names it, never its path", async () => {
    const own = "/srv/models/clinic-tuned/whisper-de.bin";
    const t = await makeTestApp({ env: { PARLEY_WHISPER_MODEL: own } });
    const res = await t.call("GET", "/v1/health");
    expect(res.body.models[0]).toEqual({
      engine: "transcriber",
      model: "whisper-de.bin",
      status: "missing",
      install: "put the model's file at the path PARLEY_WHISPER_MODEL names",
    });
    expect(JSON.stringify(res.body)).not.toContain("/srv/models");
  });

  test("a database that does not answer is 503 with status degraded; /healthz (liveness) stays 200", async () => {
    const t = await makeTestApp();
    t.deps.db.exec("ALTER TABLE schema_migrations RENAME TO schema_migrations_gone");
    const res = await t.call("GET", "/v1/health");
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: "degraded", database: { ok: false }, queue: null });
    expect((await t.call("GET", "/healthz")).status).toBe(200);
  });
});

describe("GET /metrics", () => {
  test("is 404 unless PARLEY_METRICS=1, and then nothing is counted", async () => {
    const t = await makeTestApp();
    await t.call("GET", "/v1/health");
    const res = await t.call("GET", "/metrics");
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: "not_found" });
    expect(res.body.error.message).toContain("PARLEY_METRICS=1");
    expect(t.deps.metrics.requests.size).toBe(0);
  });

  test("with PARLEY_METRICS=1: requests by route template, jobs by state, transcription real-time factor, webhook deliveries, in the Prometheus text format", async () => {
    // The webhook points at this box itself (port 9 refuses), which only an allow-listed host may.
    const t = await makeTestApp({
      engines: { transcriber: new ScriptedTranscriber(), llm: new ScriptedLlm() },
      env: { PARLEY_METRICS: "1", PARLEY_WEBHOOK_ALLOW_HOSTS: "127.0.0.1" },
    });
    const tenant = makeTenant(t.deps);
    expect(
      (await t.call("POST", "/v1/webhooks", { key: tenant.test, body: { url: "https://127.0.0.1:9/parley", events: ["recording.uploaded"] } })).status,
    ).toBe(201);
    const { recording } = await uploadedRecording(t, tenant.test, wavFixture(concat(voiced(2), silence(1), voiced(2))));
    await t.call("GET", `/v1/recordings/${recording.id}`, { key: tenant.test });
    await t.call("GET", "/no/such/path/123");
    t.deps.queue.enqueue("search.reindex", {});
    fanOutEvents(t.deps.db, t.clock.now());
    // Counted once each response is sent, which app.handle reports a moment after it returns.
    await waitFor(
      "the last requests counted",
      () => t.deps.metrics.requests.has("GET /v1/recordings/:id 200") && t.deps.metrics.requests.has("* unmatched 404"),
    );
    const res = await t.call("GET", "/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
    const text = res.body as string;
    expect(text).toContain('parley_http_request_duration_seconds_count{method="POST",route="/v1/recordings/:id/upload-complete",status="425"} 1');
    expect(text).toContain('parley_http_request_duration_seconds_count{method="GET",route="/v1/recordings/:id",status="200"} 1');
    expect(text).toContain('parley_http_request_duration_seconds_count{method="*",route="unmatched",status="404"} 1');
    expect(text).not.toContain(recording.id);
    expect(text).toContain('parley_jobs{type="search.reindex",state="queued"} 1');
    expect(text).toContain("parley_transcriptions_completed_total 1");
    expect(text).toContain("parley_transcription_audio_seconds_total 5");
    expect(Number(/^parley_transcription_real_time_factor (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
    expect(text).toContain('parley_webhook_deliveries{outcome="pending"} 1');
    expect(text).toContain(`parley_info{version="${pkg.version}"} 1`);
    expect(text).toContain("# TYPE parley_http_request_duration_seconds histogram");
    expect(text).toContain('parley_http_request_duration_seconds_bucket{method="GET",route="/v1/recordings/:id",status="200",le="+Inf"} 1');
    // Every sample line is `name{labels} value` with a number for the value.
    for (const line of text
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("#")))
      expect(line).toMatch(/^[a-z_]+(\{[^}]*\})? -?[0-9.e+-]+$/);
  });

  test("request latency is a histogram: cumulative buckets per route from which Prometheus computes a p95", async () => {
    const t = await makeTestApp({ env: { PARLEY_METRICS: "1" } });
    // Known durations straight into the counters: a request's real time is whatever the box's load makes it.
    for (const seconds of [0.003, 0.004, 0.2, 0.2, 3]) t.deps.metrics.countRequest("POST", "/v1/heartbeat", 204, seconds);
    const text = (await t.call("GET", "/metrics")).body as string;
    const series = (suffix: string) =>
      [
        ...text.matchAll(
          new RegExp(`^parley_http_request_duration_seconds${suffix}\\{method="POST",route="/v1/heartbeat",status="204"(?:,le="([^"]+)")?\\} (\\S+)$`, "gm"),
        ),
      ].map((m) => [m[1], Number(m[2])]);
    expect(Object.fromEntries(series("_bucket"))).toEqual({
      "0.005": 2,
      "0.01": 2,
      "0.025": 2,
      "0.05": 2,
      "0.1": 2,
      "0.25": 4,
      "0.5": 4,
      "1": 4,
      "2.5": 4,
      "5": 5,
      "10": 5,
      "+Inf": 5,
    });
    expect(series("_count")).toEqual([[undefined, 5]]);
    expect(series("_sum")[0]![1]).toBeCloseTo(3.407, 9);
  });
});
