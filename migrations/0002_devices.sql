-- Devices (spec 2.3). The heartbeat columns (battery_percent .. last_synced_by,
-- recording_state) are written by the device runtime (src/modules/heartbeats).
CREATE TABLE devices (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  serial_number TEXT NOT NULL,
  name TEXT,
  model TEXT NOT NULL CHECK (model IN ('parley_pin', 'parley_note')),
  firmware_version TEXT,
  mac_address TEXT,
  -- bitfield: 0x01 BLE, 0x02 WiFi upload, 0x04 cellular
  capabilities INTEGER NOT NULL DEFAULT 1,
  status TEXT NOT NULL DEFAULT 'unbound' CHECK (status IN ('unbound', 'bound')),
  end_user_id TEXT REFERENCES end_users(id),
  bound_at TEXT,
  battery_percent INTEGER,
  storage_used_mb INTEGER,
  storage_total_mb INTEGER,
  signal_strength_dbm INTEGER,
  last_heartbeat_at TEXT,
  -- channel of the last contact: bluetooth (relayed by the phone app), wifi or cellular
  last_seen_by TEXT CHECK (last_seen_by IN ('bluetooth', 'wifi', 'cellular')),
  -- last time the device's state reached the server, and over which channel (GET /state)
  last_synced_at TEXT,
  last_synced_by TEXT,
  recording_state TEXT,          -- JSON object as last reported (spec 2.5), or NULL
  metadata TEXT NOT NULL DEFAULT '{}',
  settings TEXT NOT NULL DEFAULT '{}', -- JSON of the device-level settings overrides only
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
-- A serial number is reserved for life: the index deliberately covers soft-deleted devices.
CREATE UNIQUE INDEX devices_serial ON devices(project_id, mode, serial_number);
CREATE INDEX devices_page ON devices(project_id, mode, created_at DESC, id DESC);
CREATE INDEX devices_end_user ON devices(project_id, mode, end_user_id) WHERE end_user_id IS NOT NULL;

-- Configuration overrides (decisions.md "Configuration"). The organization level has no
-- project or mode, so it lives in its own table; the other levels carry both.
CREATE TABLE organization_config (
  organization_id TEXT PRIMARY KEY REFERENCES organizations(id),
  overrides TEXT NOT NULL,       -- JSON: only the keys set at this level
  updated_at TEXT NOT NULL
);

CREATE TABLE config_overrides (
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  level TEXT NOT NULL CHECK (level IN ('project', 'end_user', 'device')),
  target_id TEXT NOT NULL,       -- the project, end user or device id
  overrides TEXT NOT NULL,       -- JSON: only the keys set at this level
  updated_at TEXT NOT NULL,
  PRIMARY KEY (project_id, mode, level, target_id)
);
