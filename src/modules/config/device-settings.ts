import { z } from "zod";

/**
 * DeviceSettings (spec 2.4 plus the audio/power blocks and the upload fields of GET
 * /settings). Every level of the configuration hierarchy stores a partial of it; the
 * device response shows the full object, defaults filled.
 */

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** -1 never powers down, 0 powers down right after work completes, otherwise 10-2540 seconds. */
const idleTimeout = z
  .number()
  .int()
  .refine((v) => v === -1 || v === 0 || (v >= 10 && v <= 2540), "must be -1, 0 or 10-2540");

const connectionFlags = z.strictObject({ wifi: z.boolean().optional(), cellular: z.boolean().optional() });

export const NETWORKS = ["wifi", "ble", "cellular"] as const;
export const UPLOAD_MODES = ["ble_only", "auto", "wifi_preferred", "4g_preferred", "wifi_only", "4g_only"] as const;
const AUDIO_CODECS = ["opus", "aac"] as const;
const SAMPLE_RATES_KHZ = [8, 16, 24, 48] as const;
const BITRATES_KBPS = [32, 64, 128] as const;

const offPeakHours = z.strictObject({
  enabled: z.boolean().optional(),
  start: z.string().regex(HH_MM, "must be HH:MM (00:00-23:59)").optional(),
  end: z.string().regex(HH_MM, "must be HH:MM (00:00-23:59)").optional(),
  timezone: z.string().max(64).refine(isTimeZone, "must be an IANA time zone such as Europe/Paris").optional(),
});

const connectionPatch = z.strictObject({
  enabled_connections: connectionFlags.optional(),
  heartbeat_enabled_connections: connectionFlags.optional(),
  upload_network_preference: z
    .array(z.enum(NETWORKS))
    .min(1)
    .max(3)
    .refine((a) => new Set(a).size === a.length, "must not repeat a network")
    .optional(),
  power_management: z.strictObject({ wifi_idle_timeout_seconds: idleTimeout.optional(), cellular_idle_timeout_seconds: idleTimeout.optional() }).optional(),
});

const uploadFields = {
  streaming_enabled: z.boolean().optional(),
  streaming_chunk_kb: z.number().int().min(64).max(1024).optional(),
  daily_data_limit_mb: z.number().int().min(0).max(10_000).optional(),
  allow_roaming: z.boolean().optional(),
  pause_on_low_battery: z.boolean().optional(),
  off_peak_hours: offPeakHours.nullable().optional(),
};

/** What PATCH /devices/{id} accepts: exactly the fields of spec 2.4, all optional, unknown keys rejected. */
export const deviceSettingsPatch = z.strictObject({
  connection: connectionPatch.optional(),
  upload: z.strictObject(uploadFields).optional(),
});

/**
 * What a configuration level accepts: the 2.4 fields plus the blocks spec 2.4 and 4.2
 * only show in responses (upload mode and delay, audio, power), which have no other writer.
 */
export const settingsOverrides = z.strictObject({
  connection: connectionPatch.optional(),
  upload: z
    .strictObject({
      ...uploadFields,
      mode: z.enum(UPLOAD_MODES).optional(),
      upload_delay_minutes: z.number().int().min(0).max(1440).optional(),
    })
    .optional(),
  audio: z
    .strictObject({
      codec: z.enum(AUDIO_CODECS).optional(),
      sample_rate_khz: z.literal(SAMPLE_RATES_KHZ).optional(),
      bitrate_kbps: z.literal(BITRATES_KBPS).optional(),
    })
    .optional(),
  power: z
    .strictObject({
      auto_sleep_minutes: z.number().int().min(0).max(1440).optional(),
      low_battery_threshold_percent: z.number().int().min(5).max(50).optional(),
    })
    .optional(),
});
export type SettingsOverrides = z.infer<typeof settingsOverrides>;

const connectionFlagsOut = z.object({ wifi: z.boolean(), cellular: z.boolean() });
const offPeakHoursSchema = z.object({ enabled: z.boolean(), start: z.string(), end: z.string(), timezone: z.string() });
export type OffPeakHours = z.infer<typeof offPeakHoursSchema>;

/** The complete settings a device response shows: every field present, defaults filled. */
export const deviceSettingsSchema = z
  .object({
    connection: z.object({
      enabled_connections: connectionFlagsOut,
      heartbeat_enabled_connections: connectionFlagsOut,
      upload_network_preference: z.array(z.enum(NETWORKS)),
      power_management: z.object({ wifi_idle_timeout_seconds: z.number().int(), cellular_idle_timeout_seconds: z.number().int() }),
    }),
    upload: z.object({
      mode: z.enum(UPLOAD_MODES),
      streaming_enabled: z.boolean(),
      streaming_chunk_kb: z.number().int(),
      upload_delay_minutes: z.number().int(),
      daily_data_limit_mb: z.number().int(),
      allow_roaming: z.boolean(),
      pause_on_low_battery: z.boolean(),
      off_peak_hours: offPeakHoursSchema.nullable(),
    }),
    audio: z.object({ codec: z.enum(AUDIO_CODECS), sample_rate_khz: z.literal(SAMPLE_RATES_KHZ), bitrate_kbps: z.literal(BITRATES_KBPS) }),
    power: z.object({ auto_sleep_minutes: z.number().int(), low_battery_threshold_percent: z.number().int() }),
  })
  .meta({ id: "DeviceSettings" });
export type DeviceSettings = z.infer<typeof deviceSettingsSchema>;

/** Documented in docs/devices.md; a change here changes every device that sets nothing. */
export const DEFAULT_SETTINGS: DeviceSettings = {
  connection: {
    enabled_connections: { wifi: true, cellular: true },
    heartbeat_enabled_connections: { wifi: true, cellular: true },
    upload_network_preference: ["wifi", "ble", "cellular"],
    power_management: { wifi_idle_timeout_seconds: 180, cellular_idle_timeout_seconds: 180 },
  },
  upload: {
    mode: "auto",
    streaming_enabled: false,
    streaming_chunk_kb: 256,
    upload_delay_minutes: 0,
    daily_data_limit_mb: 0,
    allow_roaming: false,
    pause_on_low_battery: true,
    off_peak_hours: null,
  },
  audio: { codec: "opus", sample_rate_khz: 16, bitrate_kbps: 32 },
  power: { auto_sleep_minutes: 30, low_battery_threshold_percent: 20 },
};

/** Where a partial off_peak_hours lands when nothing above set one, so the result is always complete. */
const OFF_PEAK_BASE: OffPeakHours = { enabled: false, start: "00:00", end: "06:00", timezone: "UTC" };

type Json = Record<string, unknown>;

function isPlainObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Deep merge for settings: objects merge key by key, arrays and scalars replace, null
 * replaces (off_peak_hours: null switches the window off), undefined keeps. `complete`
 * (when resolving, not when storing a level's overrides) lands a partial off_peak_hours
 * on a full default window so the result never lacks a field.
 */
export function mergeSettings<T extends Json>(base: T, patch: Json | undefined, complete = false): T {
  if (!patch) return base;
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const current = out[key];
    if (isPlainObject(value)) {
      const from = isPlainObject(current) ? current : complete && key === "off_peak_hours" ? OFF_PEAK_BASE : {};
      out[key] = mergeSettings(from, value, complete);
    } else {
      out[key] = value;
    }
  }
  return out as T;
}

/** The complete settings of a device: defaults, then each level's overrides from farthest to nearest. */
export function resolveSettings(levels: (SettingsOverrides | undefined)[]): DeviceSettings {
  return levels.reduce<DeviceSettings>((acc, level) => mergeSettings(acc, level as Json | undefined, true), structuredClone(DEFAULT_SETTINGS));
}
