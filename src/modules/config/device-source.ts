import type { Database } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import type { SettingsOverrides } from "./device-settings";

/** A device as its configuration level sees it: whose it is, the settings set on it, when its row last changed. */
export type ConfiguredDevice = { id: string; end_user_id: string | null; settings: SettingsOverrides; updated_at: string };

/**
 * What configuration needs of the devices module: a device's own settings are stored on its
 * row, and its bound end user's level applies to it. Config sits below devices (decision
 * 083), so it names what it needs here and devices supplies it in Deps (`deviceSource`,
 * built by buildDeps); config never imports devices.
 */
export type DeviceSource = {
  /** A device of the tenant that is not deleted, or null. */
  find(db: Database, tenant: Tenant, id: string): ConfiguredDevice | null;
  /** Replaces the device's own settings overrides (its row's updated_at moves with them). */
  saveSettings(db: Database, tenant: Tenant, id: string, settings: SettingsOverrides, now: string): void;
};
