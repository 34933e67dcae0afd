import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { addFirmware } from "../../src/modules/firmware/releases";
import { makeTempDir, makeTenant, makeTestApp, waitFor } from "../helpers";
import { concat, seedRecording, silence, voiced, wav } from "../modules/pipeline-fixtures";

/**
 * The access matrices' shared world (decision 084; roles, decision 136): every route of the
 * app, from the app itself, so a new one is in the matrices the day it is mounted (it needs a
 * REQUESTS entry only if it takes a body), and one owner (a project, test mode) holding one
 * of everything, with a request per route aimed at the owner's objects.
 */

/** Routes outside the bearer-credential model, and why. */
export const EXEMPT: Record<string, string> = {
  "GET /v1/openapi.json": "the public API document",
  "GET /v1/health": "for monitors, without a key: counts, free space and model names, nothing of any project (decision 086)",
  "PUT /v1/uploads/:token": "the URL is the credential (an up_ token); Authorization is not read",
};

/** Every route the app serves, as "METHOD /path/:param"; those under /v1, and those the matrices call. */
export const appRoutes = (await makeTestApp()).app.routes.map((r) => `${r.method} ${r.path}`);
export const served = appRoutes.filter((r) => r.split(" ")[1]!.startsWith("/v1/"));
export const routes = served.filter((r) => !(r in EXEMPT));

export type Matrix = Awaited<ReturnType<typeof matrixFixture>>;
type Fixed = { body?: unknown; query?: string };

/** The owner's world: its objects (`own`), its data that is not an id (`marker`), and the credentials the matrices need. */
export async function matrixFixture() {
  /** The owner's objects by name: a request naming one of them must be refused. */
  const own: Record<string, string> = {};
  /** The owner's data that is not an id (names, serials, tokens): it must never come back either. */
  const marker: Record<string, string> = {};
  /** Bodies and queries that pass validation and aim at the owner's objects. */
  const REQUESTS: Record<string, () => Fixed> = {
    "POST /v1/end-users": () => ({ body: { name: "Intruder" } }),
    "GET /v1/end-users": () => ({ query: `external_id=${marker.externalId}` }),
    "PATCH /v1/end-users/:id": () => ({ body: { name: "Hijacked" } }),
    "POST /v1/recordings": () => ({ body: { end_user_id: own.endUser } }),
    "GET /v1/recordings": () => ({ query: `end_user_id=${own.endUser}` }),
    "POST /v1/recordings/:id/upload-url": () => ({ body: {} }),
    "POST /v1/recordings/:id/upload-complete": () => ({ body: {} }),
    "POST /v1/devices": () => ({ body: { serial_number: marker.serial, model: "parley_pin" } }),
    "GET /v1/devices": () => ({ query: `serial_number=${marker.serial}` }),
    "PATCH /v1/devices/:id": () => ({ body: { metadata: { hijacked: true } } }),
    "POST /v1/devices/:id/bind": () => ({ body: { end_user_id: own.endUser } }),
    "POST /v1/devices/:id/heartbeat": () => ({ body: { battery_percent: 1 } }),
    "POST /v1/devices/:id/commands": () => ({ body: { type: "start_recording" } }),
    "POST /v1/devices/:id/commands/:cmd_id/complete": () => ({ body: { status: "executed" } }),
    "POST /v1/devices/:id/deprovision/grant": () => ({ body: { nonce: "matrix-nonce-0123456789" } }),
    "POST /v1/devices/:id/ota": () => ({ body: { firmware_release_id: own.firmware } }),
    "POST /v1/firmware-releases": () => ({ query: "version=9.9.9&model=parley_pin" }),
    "PUT /v1/config/project": () => ({ body: { auto_summarize: true } }),
    "PUT /v1/config/end-users/:id": () => ({ body: { auto_summarize: true } }),
    "PUT /v1/config/devices/:id": () => ({ body: { auto_summarize: true } }),
    "POST /v1/transcriptions": () => ({ body: { recording_id: own.recording } }),
    "PATCH /v1/transcriptions/:id/speakers": () => ({ body: { SPEAKER_1: { name: "Hijacked" } } }),
    "PATCH /v1/transcriptions/:id/segments/:index": () => ({ body: { text: "Hijacked" } }),
    "PATCH /v1/transcriptions/:id/segments": () => ({ body: { segments: [{ index: 0, text: "Hijacked" }] } }),
    "POST /v1/transcriptions/:id/revisions": () => ({ body: { restore: 0 } }),
    "GET /v1/transcriptions/:id/export": () => ({ query: "format=json" }),
    "GET /v1/transcriptions": () => ({ query: `recording_id=${own.recording}` }),
    "POST /v1/summaries": () => ({ body: { transcription_id: own.transcription } }),
    "GET /v1/summaries": () => ({ query: `transcription_id=${own.transcription}` }),
    "GET /v1/summaries/:id/export": () => ({ query: "format=fhir" }),
    "POST /v1/recordings/search": () => ({ body: { query: "utterance", end_user_id: own.endUser } }),
    "POST /v1/ask/sessions": () => ({ body: { scope: { type: "recording", recording_id: own.recording } } }),
    "GET /v1/ask/sessions": () => ({ query: `end_user_id=${own.endUser}` }),
    "POST /v1/ask/sessions/:id/messages": () => ({ body: { content: "What was said?" } }),
    "POST /v1/webhooks": () => ({ body: { url: "https://hooks.example.com/intruder", events: ["recording.created"] } }),
    "GET /v1/audit-events": () => ({ query: `resource_id=${own.recording}` }),
    "POST /v1/legal-holds": () => ({ body: { matter: "Intruder v. Owner", recording_id: own.recording } }),
    "POST /v1/exports": () => ({ body: { end_user_id: own.endUser } }),
    "POST /v1/voices": () => ({ body: { name: "Intruder", end_user_id: own.endUser } }),
    "GET /v1/voices": () => ({ query: `end_user_id=${own.endUser}` }),
    "PATCH /v1/voices/:id": () => ({ body: { name: "Hijacked" } }),
    "POST /v1/voices/:id/samples": () => ({ body: { recording_id: own.recording, start_ms: 0, end_ms: 4000 } }),
  };

  /** Which owner object a path parameter names: the resource the segment before it is. */
  function fillPath(path: string): string {
    const BY_SEGMENT: Record<string, string> = {
      "end-users": "endUser",
      recordings: "recording",
      devices: "device",
      transcriptions: "transcription",
      summaries: "summary",
      sessions: "session",
      webhooks: "webhook",
      "firmware-releases": "firmware",
      commands: "command",
      ota: "ota",
      deliveries: "delivery",
      "legal-holds": "legalHold",
      exports: "export",
      voices: "voice",
    };
    const parts = path.split("/");
    return parts
      .map((part, i) => {
        if (!part.startsWith(":")) return part;
        // A segment's index is a position in the owner's transcription, not an id of its own.
        if (part === ":index") return "0";
        const name = BY_SEGMENT[parts[i - 1]!];
        if (!name || !own[name]) throw new Error(`access matrix: no owner object for ${part} in ${path}; add it to fillPath`);
        return own[name];
      })
      .join("/");
  }
  /** Routes' documented scopes, and those whose query or body takes an `end_user_id` (from the OpenAPI document, so a new one is covered the day it is mounted). */
  const scopeOf = new Map<string, string | null>();
  const takesEndUser = new Map<string, "query" | "body">();

  const t = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber(), llm: new ScriptedLlm() } });
  const owner = makeTenant(t.deps, "matrix-owner");
  const intruder = makeTenant(t.deps, "matrix-intruder");
  const call = async (method: string, path: string, body?: unknown, key: string = owner.test) => {
    const r = await t.call(method, path, { key, body });
    if (r.status >= 300) throw new Error(`fixture ${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  marker.externalId = "matrix-owner-external-id";
  marker.serial = "MATRIX-OWNER-SERIAL";
  marker.personName = "Owner Person";
  marker.email = "owner.person@matrix.example";
  const person = await call("POST", "/v1/end-users", { external_id: marker.externalId, name: marker.personName, email: marker.email });
  own.endUser = person.id;
  const someoneElse = (await call("POST", "/v1/end-users", { name: "Someone Else" })).id;

  // Two devices of the same end user: the second one's token is the foreign device token,
  // so only the device half of the rule stands between it and the first one's recordings.
  const device = await call("POST", "/v1/devices", { serial_number: marker.serial, model: "parley_pin", capabilities: 3 });
  own.device = device.id;
  const deviceToken = (await call("POST", `/v1/devices/${device.id}/bind`, { end_user_id: own.endUser })).device_token;
  marker.deviceToken = deviceToken;
  const sibling = await call("POST", "/v1/devices", { serial_number: "MATRIX-SIBLING", model: "parley_pin" });
  const siblingToken = (await call("POST", `/v1/devices/${sibling.id}/bind`, { end_user_id: own.endUser })).device_token;
  await call("POST", `/v1/devices/${device.id}/heartbeat`, { battery_percent: 80 }, deviceToken);

  // A webhook first, so the events below give it deliveries.
  const webhook = await call("POST", "/v1/webhooks", { url: "https://10.0.0.9:9/owner-hook", events: ["*"] });
  own.webhook = webhook.id;

  const audio = wav(concat(voiced(2), silence(1), voiced(2)));
  own.recording = await seedRecording(t.deps, { projectId: owner.project.id, mode: "test" }, audio, { endUserId: own.endUser, deviceId: device.id });
  own.transcription = (await call("POST", "/v1/transcriptions", { recording_id: own.recording })).id;
  await t.deps.queue.drain();
  // Clinical, so its FHIR export answers too.
  own.summary = (await call("POST", "/v1/summaries", { transcription_id: own.transcription, template: "clinical" })).id;
  own.legalHold = (await call("POST", "/v1/legal-holds", { matter: "Owner's matter", end_user_id: someoneElse })).id;
  own.export = (await call("POST", "/v1/exports", { matter: "Owner's export", recording_ids: [own.recording] })).id;
  await t.deps.queue.drain();
  own.session = (await call("POST", "/v1/ask/sessions", { scope: { type: "recording", recording_id: own.recording }, title: "Owner's private chat" })).id;
  marker.sessionTitle = "Owner's private chat";

  // A recording the device is still uploading: its up_ token is the upload-token credential.
  const pending = await call("POST", "/v1/recordings", { name: "Owner pending upload" }, deviceToken);
  own.pendingRecording = pending.id;
  marker.pendingName = "Owner pending upload";
  const uploadUrl: string = (await call("POST", `/v1/recordings/${pending.id}/upload-url`, {}, deviceToken)).upload_url;
  const uploadToken = new URL(uploadUrl).pathname.split("/").pop()!;

  own.command = (await call("POST", `/v1/devices/${device.id}/commands`, { type: "start_recording" })).id;
  marker.voiceName = "Owner Voice Name";
  own.voice = (await call("POST", "/v1/voices", { name: marker.voiceName, end_user_id: own.endUser })).id;
  const image = join(makeTempDir(), "fw.bin");
  writeFileSync(image, "matrix firmware image");
  // Releases belong to the organization, which the intruder's project shares: not the owner's alone, so never counted as leaked.
  const firmware = addFirmware(
    t.deps.db,
    t.deps.config.dataDir,
    { organizationId: owner.project.organization_id, version: "1.0.0", model: "parley_pin", file: image, publish: true },
    t.clock.now(),
  );
  own.firmware = firmware.id;
  own.ota = (await call("POST", `/v1/devices/${device.id}/ota`, { firmware_release_id: firmware.id })).id;

  await t.deps.webhooks.drain();
  own.delivery = await waitFor("a webhook delivery", async () => (await call("GET", `/v1/webhooks/${webhook.id}/deliveries`)).data[0]?.id);

  const doc = (await t.call("GET", "/v1/openapi.json")).body;
  for (const [path, item] of Object.entries<Record<string, { description?: string }>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const route = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`;
      scopeOf.set(route, op.description?.match(/^Scope ([a-z_]+:(?:read|write))\b/)?.[1] ?? null);
      const shape = op as { parameters?: { name: string; in: string }[]; requestBody?: { content?: Record<string, { schema?: { properties?: object } }> } };
      if (shape.parameters?.some((p) => p.name === "end_user_id" && p.in === "query")) takesEndUser.set(route, "query");
      if (
        shape.requestBody?.content?.["application/json"]?.schema?.properties &&
        "end_user_id" in shape.requestBody.content["application/json"].schema.properties
      )
        takesEndUser.set(route, "body");
    }
  }
  /** The request a route's entry sends (its body and query), or nothing. */
  const request = (route: string): Fixed => REQUESTS[route]?.() ?? {};
  return {
    t,
    owner,
    intruder,
    person,
    someoneElse,
    siblingToken,
    uploadToken,
    own,
    marker,
    scopeOf,
    takesEndUser,
    request,
    requested: Object.keys(REQUESTS),
    fillPath,
  };
}
