import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { isoDateTime, metadataOut, metadataSchema } from "../../http/schemas";
import { type DeviceSettings, deviceSettingsPatch, deviceSettingsSchema } from "../config/device-settings";

export const DEVICE_MODELS = ["parley_pin", "parley_note"] as const;
export const CHANNELS = ["bluetooth", "wifi", "cellular"] as const;
export type Channel = (typeof CHANNELS)[number];

/** Capability bits (decisions.md): a device without WIFI_UPLOAD gets no WiFi grant. */
export const CAPABILITY = { BLE: 0x01, WIFI_UPLOAD: 0x02, CELLULAR: 0x04 } as const;

const MAC = /^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$/;

export const createDeviceBody = z.strictObject({
  serial_number: z.string().min(1).max(64),
  model: z.enum(DEVICE_MODELS),
  name: z.string().max(200).nullish(),
  firmware_version: z.string().min(1).max(32).nullish(),
  mac_address: z.string().regex(MAC, "must be six hex pairs such as AA:BB:CC:DD:EE:FF").nullish(),
  capabilities: z.number().int().min(0).max(0x07).optional(),
  metadata: metadataSchema.optional(),
});
export type CreateDeviceBody = z.infer<typeof createDeviceBody>;

export const updateDeviceBody = z.strictObject({
  firmware_version: z.string().min(1).max(32).nullish(),
  metadata: metadataSchema.optional(),
  settings: deviceSettingsPatch.optional(),
});
export type UpdateDeviceBody = z.infer<typeof updateDeviceBody>;

export const bindDeviceBody = z.strictObject({ end_user_id: z.string().min(1).max(100) });

export const listDevicesQuery = z.object({
  ...pageQuery,
  serial_number: z.string().min(1).max(64).optional(),
  status: z.enum(["unbound", "bound"]).optional(),
  end_user_id: z.string().min(1).max(100).optional(),
  model: z.enum(DEVICE_MODELS).optional(),
});
export type ListDevicesQuery = z.infer<typeof listDevicesQuery>;

const nullableInt = z.number().int().nullable();
const recordingState = z.record(z.string(), z.unknown()).nullable();
/** What the device's last heartbeat said about its battery and storage; null until it says. */
const lastReported = { battery_percent: nullableInt, storage_used_mb: nullableInt, storage_total_mb: nullableInt };

/** Device of spec 2.3 plus its identity data (mac_address, capabilities); every field always present. */
export const deviceSchema = z
  .object({
    id: z.string(),
    serial_number: z.string(),
    name: z.string().nullable(),
    model: z.enum(DEVICE_MODELS),
    firmware_version: z.string().nullable(),
    mac_address: z.string().nullable(),
    capabilities: z.number().int(),
    status: z.enum(["unbound", "bound"]),
    end_user_id: z.string().nullable(),
    ...lastReported,
    signal_strength_dbm: nullableInt,
    last_heartbeat_at: isoDateTime.nullable(),
    recording_state: recordingState,
    metadata: metadataOut,
    settings: deviceSettingsSchema,
    created_at: isoDateTime,
    updated_at: isoDateTime,
  })
  .meta({ id: "Device" });
export type Device = z.infer<typeof deviceSchema>;

/** GET /devices/{id}/state (spec 4.2): the runtime snapshot, built for polling. */
export const deviceStateSchema = z
  .object({
    device_id: z.string(),
    recording_state: recordingState,
    ...lastReported,
    last_heartbeat_at: isoDateTime.nullable(),
    last_synced_at: isoDateTime.nullable(),
    last_seen_by: z.enum(CHANNELS).nullable(),
    last_synced_by: z.string().nullable(),
  })
  .meta({ id: "DeviceState" });
export type DeviceState = z.infer<typeof deviceStateSchema>;

const { upload, audio, power } = deviceSettingsSchema.shape;

/** GET /devices/{id}/settings (spec 4.2): a window never set reads as disabled with null times. */
export const deviceSettingsViewSchema = z
  .object({
    device_id: z.string(),
    settings: z.object({
      upload: upload.omit({ streaming_chunk_kb: true }).extend({
        off_peak_hours: z.object({ enabled: z.boolean(), start: z.string().nullable(), end: z.string().nullable(), timezone: z.string().nullable() }),
      }),
      audio,
      power,
    }),
    current_status: z.object({
      network_type: z.enum(["wifi", "4g", "ble", "offline"]),
      signal_strength_dbm: nullableInt,
      is_roaming: z.boolean().nullable(),
      data_used_today_mb: nullableInt,
      ...lastReported,
    }),
    updated_at: isoDateTime,
  })
  .meta({ id: "DeviceSettingsView" });
export type DeviceSettingsView = z.infer<typeof deviceSettingsViewSchema>;

/** POST /devices/{id}/token/refresh; the token is shown once. */
export const deviceTokenSchema = z.object({ device_token: z.string() }).meta({ id: "DeviceToken" });

/** POST /devices/{id}/bind: the device and its token, shown once. */
export const boundDeviceSchema = z.object({ device: deviceSchema, device_token: z.string() }).meta({ id: "BoundDevice" });
