import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../src/app";
import { registerBackgroundWork } from "../src/background";
import { systemClock } from "../src/clock";
import { addFirmware } from "../src/modules/firmware/releases";
import { type Simulation, startSimulation } from "../src/simulator";
import { makeTempDir, makeTenant, makeTestDeps } from "./helpers";

/** The simulator against a real server on a random loopback port, with the real clock. Bounded: the run caps itself at 30 s. */
let server: { stop(): Promise<void> | void };
let base: string;
let key: string;
let sim: Simulation;
let deps: Awaited<ReturnType<typeof makeTestDeps>>;

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  const port = freePort();
  deps = await makeTestDeps({ clock: systemClock, env: { PARLEY_PORT: String(port), PARLEY_RATE_LIMIT_PER_SECOND: "0", PARLEY_RATE_LIMIT_PER_MINUTE: "0" } });
  const tenant = makeTenant(deps, "simulated");
  key = tenant.test;
  // Upload verification runs on the job queue, as in `parley serve`.
  registerBackgroundWork(deps);
  deps.queue.start();
  const app = createApp(deps).listen({ port, hostname: "127.0.0.1" });
  server = { stop: async () => void (await app.stop()) };
  base = `http://127.0.0.1:${port}`;
  sim = await startSimulation({ url: base, apiKey: key, devices: 4, durationSeconds: 30, intervalSeconds: 0.2, uploads: true });
});

describe("parley simulate", () => {
  // In the describe, so it runs before test/helpers.ts closes the Deps the server uses.
  afterAll(async () => {
    sim?.stop();
    await sim?.done;
    await server?.stop();
  });

  test("devices bind and heartbeat over wifi, cellular and a Bluetooth relay", async () => {
    expect(sim.devices.map((d) => d.channel)).toEqual(["wifi", "cellular", "wifi", "bluetooth"]);
    for (const d of sim.devices) {
      const state = await until(`a heartbeat from ${d.id}`, async () => {
        const s = (await api("GET", `/v1/devices/${d.id}/state`)).body;
        return s.last_heartbeat_at ? s : null;
      });
      expect(state.last_seen_by).toBe(d.channel);
      expect(state.recording_state.device_state).toMatch(/idle|recording|syncing/);
    }
  });

  test("executes commands, and records and uploads audio on start/stop", async () => {
    const d = sim.devices[0]!;
    const trigger = (await api("POST", `/v1/devices/${d.id}/commands`, { type: "trigger_upload" })).body;
    await until("trigger_upload executed", async () => (await api("GET", `/v1/devices/${d.id}/commands/${trigger.id}`)).body.status === "executed");
    // A recording the wearer started (the simulator presses the button now and then) ends by
    // itself a few ticks later, so a start may be refused (409) or fail on the device, and a stop
    // aimed at it may find nothing to stop: retry until the command itself is executed.
    const executed = (type: string, params?: object) =>
      until(`${type} executed`, async () => {
        const r = await api("POST", `/v1/devices/${d.id}/commands`, { type, params });
        if (r.status !== 201) return null;
        const settled = await until(`${type} settled`, async () => {
          const status = (await api("GET", `/v1/devices/${d.id}/commands/${r.body.id}`)).body.status;
          return status === "executed" || status === "failed" ? status : null;
        });
        return settled === "executed";
      });
    await executed("start_recording", { upload_after_stop: true });
    await executed("stop_recording");
    const recording = await until("an uploaded recording", async () => {
      if (sim.stats.uploadErrors) throw new Error(`upload failed: ${sim.stats.lastError}`);
      const list = (await api("GET", `/v1/recordings?device_id=${d.id}`)).body;
      return list.data?.find((r: any) => r.status !== "pending");
    });
    expect(recording).toMatchObject({ device_id: d.id, source: "device", upload_method: "wifi_direct", mime_type: "audio/ogg" });
    // One of the spoken sample conversations (20-40 s of speech), not a synthetic tone: voice
    // detection finds speech, so without a Whisper model the transcription gets as far as the
    // model and fails on it, never on "no speech".
    expect(recording.duration_seconds).toBeGreaterThan(20);
    const transcription = await until("the transcription settled", async () => {
      const t = (await api("GET", `/v1/transcriptions?recording_id=${recording.id}`)).body.data?.[0];
      return t && (t.status === "completed" || t.status === "failed") ? t : null;
    });
    expect(["audio_quality_insufficient", "audio_too_short"]).not.toContain(transcription.error?.code);
  }, 25_000);

  test("installs assigned firmware and reports OTA progress to applied", async () => {
    const d = sim.devices[1]!; // cellular parley_pin
    const file = join(makeTempDir(), "fw.bin");
    writeFileSync(file, "simulated firmware image");
    const org = deps.db.query<{ organization_id: string }, []>("SELECT organization_id FROM projects WHERE name = 'simulated'").get()!.organization_id;
    const fw = addFirmware(deps.db, deps.config.dataDir, { organizationId: org, version: "2.0.0-sim", model: "parley_pin", file, publish: true }, new Date());
    const ota = (await api("POST", `/v1/devices/${d.id}/ota`, { firmware_release_id: fw.id })).body;
    const applied = await until("OTA applied", async () => {
      const o = (await api("GET", `/v1/devices/${d.id}/ota/${ota.id}`)).body;
      return o.status === "applied" ? o : null;
    });
    expect(applied.delivered_at).not.toBeNull();
    await until("new firmware reported", async () => (await api("GET", `/v1/devices/${d.id}`)).body.firmware_version === "2.0.0-sim");
  });

  test("a factory reset relayed over Bluetooth is acknowledged with its rct_ and unbinds the device", async () => {
    const d = sim.devices[3]!;
    const cmd = (await api("POST", `/v1/devices/${d.id}/reset`)).body;
    await until("reset executed", async () => (await api("GET", `/v1/devices/${d.id}/commands/${cmd.id}`)).body.status === "executed");
    expect((await api("GET", `/v1/devices/${d.id}`)).body.status).toBe("unbound");
    expect(sim.stats.resets).toBe(1);
  });
});
