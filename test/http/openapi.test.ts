import { beforeAll, describe, expect, test } from "bun:test";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { Elysia } from "elysia";
import { z } from "zod";
import { HashingTestEmbedder } from "../../src/engines/embedder.test-double";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { errorHandling } from "../../src/http/errors";
import { createLogger } from "../../src/log";
import { fanOutEvents } from "../../src/modules/webhooks/delivery-store";
import { type CallOptions, makeTenant, makeTestApp, type Reply } from "../helpers";
import { boundDevice } from "../modules/device-runtime-fixtures";
import { BUDGET, seedTranscript } from "../modules/search-corpus";
import { fixture, pathOf, put } from "../modules/recordings-support";
import { seedRecording, wav } from "../modules/pipeline-fixtures";
import { conversation, script } from "../../scripts/test-audio/espeak-conversation";
import { type OpenApiContract, openApiContract } from "../support/openapi-contract";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let contract: OpenApiContract;

beforeAll(async () => {
  t = await makeTestApp({
    engines: { embedder: new HashingTestEmbedder(), transcriber: new ScriptedTranscriber(), llm: new ScriptedLlm() },
    // The webhook below points at this box itself, which only an allow-listed host may.
    env: { PARLEY_ASK_PROVIDER: "extractive", PARLEY_WEBHOOK_ALLOW_HOSTS: "127.0.0.1", PARLEY_METRICS: "1" },
  });
  contract = openApiContract(t.deps);
});

describe("the OpenAPI document", () => {
  test("passes Redocly's recommended-strict lint without an error or a warning", async () => {
    const config = await createConfig({ extends: ["recommended-strict"] });
    const problems = await lintFromString({ source: JSON.stringify(contract.document), absoluteRef: "openapi.json", config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  test("request schemas refuse what the server refuses with 422, and accept what it takes", () => {
    const refused: [string, string, unknown][] = [
      ["POST", "/v1/devices/dev_1/commands", { type: "factory_reset" }],
      ["POST", "/v1/devices/dev_1/commands", { type: "start_recording", colour: "red" }],
      ["POST", "/v1/ask/sessions", { scope: { type: "folder", folder_id: "f1" } }],
      ["PATCH", "/v1/devices/dev_1", { settings: { upload: { streaming_chunk_kb: 8 } } }],
      ["PUT", "/v1/config/project", { summary_template: "poem" }],
    ];
    for (const [method, url, body] of refused)
      expect(`${method} ${url} ${JSON.stringify(body)} ${contract.acceptsRequestBody(method, url, body)}`).toEndWith(" false");
    expect(contract.acceptsRequestBody("POST", "/v1/devices/dev_1/commands", { type: "trigger_upload" })).toBe(true);
    expect(contract.acceptsRequestBody("POST", "/v1/ask/sessions", { scope: { type: "library" }, end_user_id: "eu_1" })).toBe(true);
  });

  test("raw bodies are bytes, the upload URL needs no key, an optional body is not required", () => {
    const upload = contract.operationFor("PUT", "/v1/uploads/up_x")!.operation as Record<string, any>;
    expect(upload.security).toEqual([]);
    // The type upload-url tells the device to send (the audio's own), or bytes of no declared type.
    expect(Object.keys(upload.requestBody.content)).toEqual(["audio/*", "application/octet-stream"]);
    const firmware = contract.operationFor("POST", "/v1/firmware-releases")!.operation as Record<string, any>;
    expect(Object.keys(firmware.requestBody.content)).toEqual(["application/octet-stream"]);
    expect(firmware.security).toBeUndefined();
    // The WiFi grant's body only carries an optional lifetime, so it may be left out.
    const grant = contract.operationFor("POST", "/v1/devices/dev_1/wifi-config/grant")!.operation as Record<string, any>;
    expect(grant.requestBody.required).toBe(false);
  });

  test("every tag used is listed with a description; search's end-user rule is on its field; errors declare Retry-After", () => {
    const doc = contract.document as any;
    const listed = doc.tags.map((t: { name: string; description: string }) => (t.description ? t.name : `${t.name} (no description)`));
    const used = new Set(Object.values(doc.paths).flatMap((item: any) => Object.values(item).flatMap((op: any) => op.tags ?? [])));
    expect([...used].filter((tag) => !listed.includes(tag))).toEqual([]);
    const search = contract.operationFor("POST", "/v1/recordings/search")!.operation as any;
    expect(search.requestBody.content["application/json"].schema.properties.end_user_id.description).toStartWith(
      "Required unless the key is scoped to an end user",
    );
    expect(Object.keys(doc.components.responses.Error.headers)).toContain("Retry-After");
  });

  test("a response that breaks its declared schema is our 500, not the caller's 422", async () => {
    const app = new Elysia()
      .use(errorHandling(createLogger("silent")))
      .get("/broken", () => ({ count: "three" }) as never, { response: { 200: z.object({ count: z.number() }) } });
    const res = await app.handle(new Request("http://localhost/broken"));
    expect(res.status).toBe(500);
    expect((await res.json()).error.code).toBe("internal_error");
  });
});

/**
 * Every operation once with a success, through the real app: t.call checks each reply
 * against the document (test/helpers.ts), and this flow checks that none was left out.
 */
describe("every operation answers a documented success", () => {
  const answered = new Set<string>();
  /** t.call that notes which operation each success answered, for the fixtures too. */
  async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<Reply<T>> {
    const reply = await t.call<T>(method, path, opts);
    const operation = contract.operationFor(method, path);
    if (operation && reply.status < 300) answered.add(operation.key);
    return reply;
  }
  async function expectStatus(status: number, method: string, path: string, opts: CallOptions = {}) {
    const reply = await call(method, path, opts);
    expect(`${method} ${path} ${reply.status} ${reply.status === status ? "" : JSON.stringify(reply.body)}`).toBe(`${method} ${path} ${status} `);
    return reply.body;
  }
  const flow = () => ({ ...t, call });
  let acme: ReturnType<typeof makeTenant>;
  let key: string;

  beforeAll(() => {
    acme = makeTenant(t.deps, "openapi-flow");
    key = acme.test;
  });

  test("end users", async () => {
    const user = await expectStatus(201, "POST", "/v1/end-users", { key, body: { external_id: "ext-1", name: "Ada", metadata: { team: "a" } } });
    await expectStatus(200, "GET", "/v1/end-users?external_id=ext-1", { key });
    await expectStatus(200, "GET", `/v1/end-users/${user.id}`, { key });
    await expectStatus(200, "PATCH", `/v1/end-users/${user.id}`, { key, body: { name: "Ada L." } });
    await expectStatus(204, "DELETE", `/v1/end-users/${user.id}`, { key });
  });

  test("devices, their configuration and grants", async () => {
    const spare = await expectStatus(201, "POST", "/v1/devices", { key, body: { serial_number: "SN-OPENAPI-1", model: "parley_note" } });
    await expectStatus(200, "GET", "/v1/devices?serial_number=SN-OPENAPI-1", { key });
    await expectStatus(200, "PATCH", `/v1/devices/${spare.id}`, {
      key,
      body: { firmware_version: "1.0.1", settings: { upload: { off_peak_hours: { enabled: true, start: "01:00" } } } },
    });
    await expectStatus(204, "DELETE", `/v1/devices/${spare.id}`, { key });
    const d = await boundDevice(flow(), key);
    await d.heartbeat({ battery_percent: 80, recording_state: { device_state: "idle" } });
    await expectStatus(200, "GET", `/v1/devices/${d.id}`, { key });
    await expectStatus(200, "GET", `/v1/devices/${d.id}/state`, { key });
    await expectStatus(200, "GET", `/v1/devices/${d.id}/settings`, { key });
    await expectStatus(200, "GET", "/v1/config/organization", { key });
    await expectStatus(200, "PUT", "/v1/config/project", { key, body: { auto_summarize: false, summary_template: "sales" } });
    await expectStatus(200, "GET", "/v1/config/project", { key });
    await expectStatus(200, "DELETE", "/v1/config/project", { key });
    await expectStatus(200, "PUT", `/v1/config/end-users/${d.endUserId}`, { key, body: { language: "de" } });
    await expectStatus(200, "GET", `/v1/config/end-users/${d.endUserId}`, { key });
    await expectStatus(200, "DELETE", `/v1/config/end-users/${d.endUserId}`, { key });
    await expectStatus(200, "PUT", `/v1/config/devices/${d.id}`, { key, body: { settings: { audio: { codec: "aac" } } } });
    await expectStatus(200, "GET", `/v1/config/devices/${d.id}`, { key });
    await expectStatus(200, "DELETE", `/v1/config/devices/${d.id}`, { key });
    await expectStatus(200, "POST", `/v1/devices/${d.id}/wifi-config/grant`, { key, body: { expires_in_seconds: 600 } });
    await expectStatus(200, "POST", `/v1/devices/${d.id}/deprovision/grant`, { key, body: { nonce: "nonce-0123456789abcdef" } });
    await expectStatus(200, "GET", "/v1/device-grants/public-key", { key });
    await expectStatus(200, "POST", `/v1/devices/${d.id}/token/refresh`, { key: d.token });
    await expectStatus(200, "POST", `/v1/devices/${d.id}/unbind`, { key });
  });

  test("commands and the factory reset", async () => {
    const d = await boundDevice(flow(), key);
    await d.heartbeat();
    const started = await expectStatus(201, "POST", `/v1/devices/${d.id}/commands`, {
      key,
      body: { type: "start_recording", idempotency_key: "start-1", params: { max_duration_seconds: 60 } },
    });
    await expectStatus(200, "POST", `/v1/devices/${d.id}/commands`, {
      key,
      body: { type: "start_recording", idempotency_key: "start-1", params: { max_duration_seconds: 60 } },
    });
    await expectStatus(200, "GET", `/v1/devices/${d.id}/commands`, { key });
    await expectStatus(200, "GET", `/v1/devices/${d.id}/commands/${started.id}`, { key });
    await expectStatus(200, "POST", `/v1/devices/${d.id}/commands/${started.id}/cancel`, { key });
    const reset = await expectStatus(201, "POST", `/v1/devices/${d.id}/reset`, { key });
    await d.heartbeat();
    await expectStatus(200, "POST", `/v1/devices/${d.id}/commands/${reset.id}/complete`, { key: reset.grant_token, body: { status: "executed" } });
  });

  test("firmware releases and OTA", async () => {
    const image = "PARLEY-FW image for the contract";
    const release = await expectStatus(201, "POST", "/v1/firmware-releases?version=9.9.9&model=parley_pin", {
      key: acme.live,
      rawBody: image,
      headers: { "content-type": "application/octet-stream" },
    });
    await expectStatus(200, "POST", `/v1/firmware-releases/${release.id}/publish`, { key: acme.live });
    await expectStatus(200, "GET", "/v1/firmware-releases?model=parley_pin", { key });
    await expectStatus(200, "GET", `/v1/firmware-releases/${release.id}`, { key });
    const d = await boundDevice(flow(), key);
    const ota = await expectStatus(201, "POST", `/v1/devices/${d.id}/ota`, { key, body: { firmware_release_id: release.id } });
    await expectStatus(200, "GET", `/v1/devices/${d.id}/ota`, { key });
    await expectStatus(200, "GET", `/v1/devices/${d.id}/ota/${ota.id}`, { key });
    expect(await expectStatus(200, "GET", `/v1/devices/${d.id}/ota/${ota.id}/firmware`, { key: d.token })).toBe(image);
    await expectStatus(200, "POST", `/v1/devices/${d.id}/ota/${ota.id}/cancel`, { key });
  });

  test("recordings, uploads, transcriptions, summaries, search and Ask", async () => {
    const user = await expectStatus(201, "POST", "/v1/end-users", { key, body: { name: "Bob" } });
    const rec = await expectStatus(201, "POST", "/v1/recordings", { key, body: { end_user_id: user.id, name: "Call", consent_obtained: true } });
    const bytes = fixture("tone-3s.wav");
    expect((await put(flow(), key, rec.id, bytes)).status).toBe(200);
    await expectStatus(200, "POST", `/v1/recordings/${rec.id}/upload-complete`, { key, body: { file_size_bytes: bytes.length, client_version: "app/1" } });
    await expectStatus(200, "GET", `/v1/recordings?end_user_id=${user.id}`, { key });
    await expectStatus(200, "GET", `/v1/recordings/${rec.id}`, { key });
    await expectStatus(200, "GET", `/v1/recordings/${rec.id}/audio`, { key });
    await expectStatus(206, "GET", `/v1/recordings/${rec.id}/audio`, { key, headers: { range: "bytes=0-99" } });
    await t.deps.queue.drain();
    const transcription = await expectStatus(202, "POST", "/v1/transcriptions", { key, body: { recording_id: rec.id, language: "en" } });
    await expectStatus(200, "GET", `/v1/transcriptions?recording_id=${rec.id}`, { key });
    await expectStatus(200, "GET", `/v1/transcriptions/${transcription.id}`, { key });

    const seeded = seedTranscript(
      t.deps,
      { projectId: acme.project.id, mode: "test" },
      { endUserId: user.id, recordedAt: "2026-01-10T09:00:00.000Z", lines: BUDGET, name: "Planning call" },
    );
    await t.deps.queue.drain();
    const summary = await expectStatus(202, "POST", "/v1/summaries", { key, body: { transcription_id: seeded.transcriptionId, template: "general" } });
    await expectStatus(200, "GET", `/v1/summaries?transcription_id=${seeded.transcriptionId}`, { key });
    await expectStatus(200, "GET", `/v1/summaries/${summary.id}`, { key });
    const note = await expectStatus(202, "POST", "/v1/summaries", { key, body: { transcription_id: seeded.transcriptionId, template: "clinical" } });
    await t.deps.queue.drain();
    await expectStatus(200, "GET", `/v1/summaries/${note.id}/export?format=fhir`, { key });
    await expectStatus(200, "POST", "/v1/recordings/search", { key, body: { query: "budget", end_user_id: user.id } });

    const session = await expectStatus(201, "POST", "/v1/ask/sessions", { key, body: { scope: { type: "recording", recording_id: seeded.recordingId } } });
    await expectStatus(200, "POST", "/v1/ask/sessions", {
      key,
      body: { scope: { type: "library" }, end_user_id: user.id, initial_message: { content: "What is the budget?" } },
    });
    await expectStatus(200, "POST", `/v1/ask/sessions/${session.id}/messages`, { key, body: { content: "Who spoke?" } });
    await expectStatus(200, "GET", `/v1/ask/sessions?end_user_id=${user.id}`, { key });
    await expectStatus(200, "GET", `/v1/ask/sessions/${session.id}`, { key });
    await expectStatus(200, "GET", `/v1/ask/sessions/${session.id}/messages`, { key });
    await expectStatus(204, "DELETE", `/v1/ask/sessions/${session.id}`, { key });
    await expectStatus(204, "DELETE", `/v1/recordings/${rec.id}`, { key });
  });

  test("legal holds, the audit log, exports and disclosures", async () => {
    const user = await expectStatus(201, "POST", "/v1/end-users", { key, body: { name: "Held" } });
    const hold = await expectStatus(201, "POST", "/v1/legal-holds", { key, body: { matter: "Contract test", end_user_id: user.id, note: "keep" } });
    await expectStatus(200, "GET", "/v1/legal-holds?status=active", { key });
    await expectStatus(200, "GET", `/v1/legal-holds/${hold.id}`, { key });
    await expectStatus(200, "POST", `/v1/legal-holds/${hold.id}/release`, { key });
    await expectStatus(200, "GET", `/v1/audit-events?resource_id=${hold.id}`, { key });
    const exp = await expectStatus(202, "POST", "/v1/exports", { key, body: { matter: "Contract test", end_user_id: user.id } });
    await t.deps.queue.drain();
    await expectStatus(200, "GET", "/v1/exports", { key });
    await expectStatus(200, "GET", `/v1/exports/${exp.id}`, { key });
    await expectStatus(200, "GET", `/v1/exports/${exp.id}/download`, { key });
    await expectStatus(200, "GET", `/v1/end-users/${user.id}/disclosures`, { key });
    await expectStatus(200, "GET", `/v1/end-users/${user.id}/disclosures?format=csv`, { key });
    await expectStatus(204, "DELETE", `/v1/exports/${exp.id}`, { key });
  });

  test("speakers and known voices", async () => {
    const tenant = { projectId: acme.project.id, mode: "test" as const };
    const seeded = seedTranscript(t.deps, tenant, { endUserId: null, recordedAt: null, lines: BUDGET, name: "Speakers" });
    await t.deps.queue.drain();
    await expectStatus(200, "GET", `/v1/transcriptions/${seeded.transcriptionId}/transcript?format=vtt`, { key });
    // A completed transcription's live stream ends at once with completed. Its own key: the
    // flow's key is near its 100 requests in the (manual) clock's one second.
    await expectStatus(200, "GET", `/v1/transcriptions/${seeded.transcriptionId}/live`, { key: acme.key("test") });
    await expectStatus(200, "PATCH", `/v1/transcriptions/${seeded.transcriptionId}/speakers`, { key, body: { SPEAKER_2: { name: "Dana" } } });
    // Corrections and exports under a key of their own: the flow's key stays under its 100 requests a second.
    const txn = `/v1/transcriptions/${seeded.transcriptionId}`;
    const editor = acme.key("test");
    await expectStatus(200, "PATCH", `${txn}/segments/0`, { key: editor, body: { text: "Thanks all for joining." } });
    await expectStatus(200, "PATCH", `${txn}/segments`, { key: editor, body: { segments: [{ index: 1, speaker: "Dana K.", apply_to: "speaker" }] } });
    await expectStatus(200, "GET", `${txn}/revisions`, { key: editor });
    await expectStatus(201, "POST", `${txn}/revisions`, { key: editor, body: { restore: 0 } });
    await expectStatus(200, "GET", `${txn}/export?format=pdf&inaudible_below=0.5`, { key: editor });
    const voice = await expectStatus(201, "POST", "/v1/voices", { key, body: { name: "Dana" } });
    await expectStatus(200, "GET", "/v1/voices", { key });
    await expectStatus(200, "GET", `/v1/voices/${voice.id}`, { key });
    await expectStatus(200, "PATCH", `/v1/voices/${voice.id}`, { key, body: { name: "Dana K." } });
    const rec = await seedRecording(t.deps, tenant, wav(conversation(script([1, 1])).pcm));
    await expectStatus(201, "POST", `/v1/voices/${voice.id}/samples`, { key, body: { recording_id: rec, start_ms: 0, end_ms: 5000 } });
    await expectStatus(204, "DELETE", `/v1/voices/${voice.id}`, { key });
  });

  test("webhooks and their deliveries", async () => {
    // Port 9 refuses at once: the retry below has somewhere to fail, not to wait.
    const hook = await expectStatus(201, "POST", "/v1/webhooks", { key, body: { url: "https://127.0.0.1:9/parley", events: ["*"] } });
    await expectStatus(201, "POST", "/v1/end-users", { key, body: { name: "an event" } });
    fanOutEvents(t.deps.db, t.clock.now());
    await expectStatus(200, "GET", "/v1/webhooks", { key });
    await expectStatus(200, "GET", `/v1/webhooks/${hook.id}`, { key });
    const deliveries = await expectStatus(200, "GET", `/v1/webhooks/${hook.id}/deliveries`, { key });
    await expectStatus(202, "POST", `/v1/webhooks/${hook.id}/deliveries/${deliveries.data[0].id}/retry`, { key });
    await expectStatus(204, "DELETE", `/v1/webhooks/${hook.id}`, { key });
  });

  test("health and metrics, without a key", async () => {
    await expectStatus(200, "GET", "/v1/health");
    await expectStatus(200, "GET", "/metrics");
  });

  test("no operation was left without a success", () => {
    expect(contract.operationKeys().filter((k) => !answered.has(k))).toEqual([]);
  });
});
