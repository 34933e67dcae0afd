import { z } from "zod";
import { pageQuery } from "../../http/pagination";
import { metadataSchema } from "../../http/schemas";
import { type DeviceSettings, deviceSettingsPatch } from "../config/device-settings";

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

/** Device of spec 2.3 plus its identity data (mac_address, capabilities); every field always present. */
export type Device = {
  id: string;
  serial_number: string;
  name: string | null;
  model: (typeof DEVICE_MODELS)[number];
  firmware_version: string | null;
  mac_address: string | null;
  capabilities: number;
  status: "unbound" | "bound";
  end_user_id: string | null;
  battery_percent: number | null;
  storage_used_mb: number | null;
  storage_total_mb: number | null;
  signal_strength_dbm: number | null;
  last_heartbeat_at: string | null;
  recording_state: Record<string, unknown> | null;
  metadata: Record<string, unknown>;
  settings: DeviceSettings;
  created_at: string;
  updated_at: string;
};

/** GET /devices/{id}/state (spec 4.2): the runtime snapshot, built for polling. */
export type DeviceState = {
  device_id: string;
  recording_state: Record<string, unknown> | null;
  battery_percent: number | null;
  storage_used_mb: number | null;
  storage_total_mb: number | null;
  last_heartbeat_at: string | null;
  last_synced_at: string | null;
  last_seen_by: Channel | null;
  last_synced_by: string | null;
};
