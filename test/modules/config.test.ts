import { beforeAll, describe, expect, spyOn, test } from "bun:test";
import { configCommand } from "../../src/modules/config/cli";
import { resolveConfig, writeOrganizationConfig } from "../../src/modules/config/service";
import { organizationOf } from "../../src/modules/config/store";
import { makeTenant, makeTestApp } from "../helpers";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let other: ReturnType<typeof makeTenant>;
let serial = 0;

beforeAll(async () => {
  t = await makeTestApp();
  acme = makeTenant(t.deps, "acme-config");
  other = makeTenant(t.deps, "other-config");
});

const tenant = () => ({ projectId: acme.project.id, mode: "test" as const });

async function boundDevice() {
  const user = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
  const device = (await t.call("POST", "/v1/devices", { key: acme.test, body: { serial_number: `C-${++serial}`, model: "parley_pin" } })).body;
  await t.call("POST", `/v1/devices/${device.id}/bind`, { key: acme.test, body: { end_user_id: user.id } });
  return { user, device };
}

describe("resolveConfig (contract 2)", () => {
  test("defaults when nothing is set", () => {
    const fresh = makeTenant(t.deps, "fresh-config");
    const c = resolveConfig(t.deps, { projectId: fresh.project.id, mode: "live" });
    expect(Object.keys(c).sort()).toEqual([
      "allow_wearer_delete",
      "ask_provider",
      "auto_summarize",
      "auto_transcribe",
      "language",
      "max_speakers",
      "min_speakers",
      "redact_webhook_payloads",
      "retention_audio_days",
      "retention_transcript_days",
      "settings",
      "summary_template",
      "vocabulary",
    ]);
    expect(c).toMatchObject({
      auto_transcribe: true,
      auto_summarize: true,
      summary_template: "general",
      language: null,
      ask_provider: null,
      redact_webhook_payloads: false,
      allow_wearer_delete: false,
      retention_audio_days: null,
      retention_transcript_days: null,
      min_speakers: null,
      max_speakers: null,
      vocabulary: [],
    });
    expect(c.settings.upload.streaming_chunk_kb).toBe(256);
  });

  test("the nearest level wins: device over end user over project over organization; settings merge deeply", async () => {
    const { user, device } = await boundDevice();
    const org = organizationOf(t.deps.db, tenant());
    writeOrganizationConfig(
      t.deps.db,
      org,
      { summary_template: "sales", language: "de", ask_provider: "extractive", settings: { upload: { streaming_chunk_kb: 128, daily_data_limit_mb: 50 } } },
      t.clock.now(),
    );
    try {
      let c = resolveConfig(t.deps, tenant(), { deviceId: device.id });
      expect(c).toMatchObject({ summary_template: "sales", language: "de", ask_provider: "extractive" });

      await t.call("PUT", "/v1/config/project", { key: acme.test, body: { language: "fr", settings: { upload: { streaming_chunk_kb: 512 } } } });
      c = resolveConfig(t.deps, tenant(), { deviceId: device.id });
      expect(c).toMatchObject({ language: "fr", summary_template: "sales" });
      expect(c.settings.upload).toMatchObject({ streaming_chunk_kb: 512, daily_data_limit_mb: 50 });

      await t.call("PUT", `/v1/config/end-users/${user.id}`, {
        key: acme.test,
        body: { language: "es", auto_summarize: false, settings: { upload: { allow_roaming: true } } },
      });
      c = resolveConfig(t.deps, tenant(), { deviceId: device.id });
      expect(c).toMatchObject({ language: "es", auto_summarize: false });
      expect(c.settings.upload).toMatchObject({ streaming_chunk_kb: 512, daily_data_limit_mb: 50, allow_roaming: true });

      await t.call("PUT", `/v1/config/devices/${device.id}`, {
        key: acme.test,
        body: { language: "auto", summary_template: "legal", settings: { upload: { streaming_chunk_kb: 64 } } },
      });
      c = resolveConfig(t.deps, tenant(), { deviceId: device.id });
      expect(c).toMatchObject({ language: null, summary_template: "legal", auto_summarize: false, ask_provider: "extractive", auto_transcribe: true });
      expect(c.settings.upload).toMatchObject({ streaming_chunk_kb: 64, daily_data_limit_mb: 50, allow_roaming: true });

      // The device response shows the same resolved settings.
      expect((await t.call("GET", `/v1/devices/${device.id}`, { key: acme.test })).body.settings).toEqual(c.settings);
      // An explicit endUserId (a recording's) wins over the device's binding; null skips the end-user level.
      expect(resolveConfig(t.deps, tenant(), { deviceId: device.id, endUserId: null }).settings.upload.allow_roaming).toBe(false);
      expect(resolveConfig(t.deps, tenant(), { endUserId: user.id })).toMatchObject({ language: "es", summary_template: "sales" });

      // Unbinding drops the end user's level from the device.
      await t.call("POST", `/v1/devices/${device.id}/unbind`, { key: acme.test });
      expect(resolveConfig(t.deps, tenant(), { deviceId: device.id })).toMatchObject({ auto_summarize: true, summary_template: "legal" });
    } finally {
      writeOrganizationConfig(t.deps.db, org, null, t.clock.now());
      await t.call("DELETE", "/v1/config/project", { key: acme.test });
    }
  });

  test("project configuration is per mode", async () => {
    await t.call("PUT", "/v1/config/project", { key: acme.live, body: { auto_transcribe: false } });
    expect(resolveConfig(t.deps, { projectId: acme.project.id, mode: "live" }).auto_transcribe).toBe(false);
    expect(resolveConfig(t.deps, tenant()).auto_transcribe).toBe(true);
    await t.call("DELETE", "/v1/config/project", { key: acme.live });
  });
});

describe("/config endpoints", () => {
  test("PUT replaces a level, GET shows overrides (null = inherited) and the effective result, DELETE clears", async () => {
    const put = await t.call("PUT", "/v1/config/project", {
      key: acme.test,
      body: { auto_summarize: false, settings: { connection: { upload_network_preference: ["ble"] } } },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      level: "project",
      target_id: acme.project.id,
      overrides: {
        auto_transcribe: null,
        auto_summarize: false,
        summary_template: null,
        language: null,
        ask_provider: null,
        settings: { connection: { upload_network_preference: ["ble"] } },
      },
      effective: { auto_transcribe: true, auto_summarize: false },
    });
    expect(put.body.effective.settings.connection.upload_network_preference).toEqual(["ble"]);
    expect(put.body.updated_at).toBe(t.clock.now().toISOString());
    expect((await t.call("GET", "/v1/config/project", { key: acme.test })).body).toEqual(put.body);
    const replaced = await t.call("PUT", "/v1/config/project", { key: acme.test, body: { language: "en" } });
    expect(replaced.body.overrides).toMatchObject({ auto_summarize: null, language: "en", settings: {} });
    const cleared = await t.call("DELETE", "/v1/config/project", { key: acme.test });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ overrides: { language: null, settings: {} }, effective: { language: null }, updated_at: null });
  });

  test("device level: settings are the device's own overrides, shared with PATCH /devices", async () => {
    const { device } = await boundDevice();
    await t.call("PATCH", `/v1/devices/${device.id}`, { key: acme.test, body: { settings: { upload: { streaming_enabled: true } } } });
    const got = await t.call("GET", `/v1/config/devices/${device.id}`, { key: acme.test });
    expect(got.body.overrides.settings).toEqual({ upload: { streaming_enabled: true } });
    await t.call("PUT", `/v1/config/devices/${device.id}`, { key: acme.test, body: { settings: { audio: { codec: "aac", bitrate_kbps: 64 } } } });
    const dev = (await t.call("GET", `/v1/devices/${device.id}`, { key: acme.test })).body;
    expect(dev.settings.audio).toEqual({ codec: "aac", sample_rate_khz: 16, bitrate_kbps: 64 });
    expect(dev.settings.upload.streaming_enabled).toBe(false);
    await t.call("DELETE", `/v1/config/devices/${device.id}`, { key: acme.test });
    expect((await t.call("GET", `/v1/devices/${device.id}`, { key: acme.test })).body.settings.audio.codec).toBe("opus");
  });

  test("GET /config/organization reads what the CLI wrote; the API cannot write it", async () => {
    const log = spyOn(console, "log").mockImplementation(() => {});
    try {
      configCommand(t.deps, ["set", "--level", "organization", "ask_provider=openai_compatible", "settings.power.auto_sleep_minutes=5"]);
      const r = await t.call("GET", "/v1/config/organization", { key: acme.test });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ level: "organization", overrides: { ask_provider: "openai_compatible", settings: { power: { auto_sleep_minutes: 5 } } } });
      expect((await t.call("GET", "/v1/config/project", { key: other.live })).body.effective.ask_provider).toBe("openai_compatible");
      expect((await t.call("PUT", "/v1/config/organization", { key: acme.test, body: {} })).status).toBe(404);
      configCommand(t.deps, ["set", "--level", "project", "--project", "acme-config", "--mode", "test", "summary_template=clinical"]);
      expect((await t.call("GET", "/v1/config/project", { key: acme.test })).body.overrides.summary_template).toBe("clinical");
      configCommand(t.deps, ["unset", "--level", "project", "--project", "acme-config", "--mode", "test", "summary_template"]);
      expect((await t.call("GET", "/v1/config/project", { key: acme.test })).body.overrides.summary_template).toBeNull();
      expect(() => configCommand(t.deps, ["set", "--level", "organization", "settings.upload.streaming_chunk_kb=5"])).toThrow("streaming_chunk_kb");
    } finally {
      configCommand(t.deps, ["clear", "--level", "organization"]);
      log.mockRestore();
    }
  });

  test.each([
    [{ auto_transcribe: "yes" }, "auto_transcribe"],
    [{ summary_template: "Bad Name" }, "summary_template"],
    [{ language: "english!" }, "language"],
    [{ ask_provider: "gpt" }, "ask_provider"],
    [{ settings: { upload: { streaming_chunk_kb: 2048 } } }, "settings.upload.streaming_chunk_kb"],
    [{ settings: { audio: { sample_rate_khz: 44 } } }, "settings.audio.sample_rate_khz"],
    [{ settings: { audio: { codec: "mp3" } } }, "settings.audio.codec"],
    [{ settings: { audio: { bitrate_kbps: 96 } } }, "settings.audio.bitrate_kbps"],
    [{ settings: { upload: { mode: "lte_only" } } }, "settings.upload.mode"],
    [{ settings: { power: { low_battery_threshold_percent: 90 } } }, "settings.power.low_battery_threshold_percent"],
    [{ unknown_key: true }, ""],
  ])("PUT %j is 422", async (body, param) => {
    const r = await t.call("PUT", "/v1/config/project", { key: acme.test, body });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("validation_error");
    if (param) expect(r.body.error.param).toBe(param);
  });

  test("unknown end user or device is 404; a deleted end user's configuration is read-only (409)", async () => {
    expect((await t.call("GET", "/v1/config/end-users/eu_nope", { key: acme.test })).status).toBe(404);
    expect((await t.call("PUT", "/v1/config/devices/dev_nope", { key: acme.test, body: {} })).body.error).toMatchObject({
      code: "not_found",
      message: "Device not found",
    });
    const user = (await t.call("POST", "/v1/end-users", { key: acme.test, body: {} })).body;
    await t.call("DELETE", `/v1/end-users/${user.id}`, { key: acme.test });
    expect((await t.call("GET", `/v1/config/end-users/${user.id}`, { key: acme.test })).status).toBe(200);
    const r = await t.call("PUT", `/v1/config/end-users/${user.id}`, { key: acme.test, body: { language: "en" } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("resource_conflict");
  });
});

describe("/config security", () => {
  test("scopes config:read and config:write; other project or mode is 404", async () => {
    const { user, device } = await boundDevice();
    const reader = acme.key("test", { scopes: ["config:read"] });
    expect((await t.call("GET", "/v1/config/project", { key: reader })).status).toBe(200);
    expect((await t.call("PUT", "/v1/config/project", { key: reader, body: {} })).status).toBe(403);
    expect((await t.call("GET", "/v1/config/organization", { key: acme.key("test", { scopes: ["devices:read"] }) })).status).toBe(403);
    for (const key of [other.test, acme.live]) {
      expect((await t.call("GET", `/v1/config/end-users/${user.id}`, { key })).status).toBe(404);
      expect((await t.call("PUT", `/v1/config/devices/${device.id}`, { key, body: {} })).status).toBe(404);
    }
  });

  test("an end-user-scoped key reaches only its own level and devices, and reads but never writes shared levels", async () => {
    const mine = await boundDevice();
    const theirs = await boundDevice();
    const key = acme.key("test", { endUserId: mine.user.id });
    expect((await t.call("PUT", `/v1/config/end-users/${mine.user.id}`, { key, body: { language: "it" } })).status).toBe(200);
    expect((await t.call("PUT", `/v1/config/devices/${mine.device.id}`, { key, body: { language: "it" } })).status).toBe(200);
    expect((await t.call("GET", `/v1/config/end-users/${theirs.user.id}`, { key })).status).toBe(404);
    expect((await t.call("PUT", `/v1/config/devices/${theirs.device.id}`, { key, body: {} })).status).toBe(404);
    expect((await t.call("GET", "/v1/config/project", { key })).status).toBe(200);
    expect((await t.call("PUT", "/v1/config/project", { key, body: {} })).status).toBe(403);
    expect((await t.call("DELETE", "/v1/config/project", { key })).status).toBe(403);
  });
});
