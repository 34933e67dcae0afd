-- Device runtime (issue 3 part 2): commands, firmware releases, OTA assignments and the
-- state the heartbeat keeps for its once-per-dip / once-per-outage device events.

-- Commands (spec 2.6, 3.2). grant_secret holds the rct_ completion credential of a
-- factory_reset sealed with the server secret (it must be handed to the device on
-- delivery); its hash lives in credentials like every other bearer token.
CREATE TABLE device_commands (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  device_id TEXT NOT NULL REFERENCES devices(id),
  type TEXT NOT NULL CHECK (type IN ('start_recording', 'stop_recording', 'trigger_upload', 'factory_reset')),
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'executed', 'failed', 'expired', 'cancelled')),
  params TEXT,
  idempotency_key TEXT,
  grant_secret TEXT,
  result TEXT,
  error TEXT,
  expires_at TEXT,
  delivered_at TEXT,
  executed_at TEXT,
  cancelled_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX device_commands_page ON device_commands(project_id, mode, device_id, created_at DESC, id DESC);
-- The heartbeat's "what is pending for me" and the expiry sweep.
CREATE INDEX device_commands_open ON device_commands(device_id, status) WHERE status IN ('pending', 'delivered');
CREATE INDEX device_commands_expiry ON device_commands(expires_at) WHERE status IN ('pending', 'delivered');
-- Per-device idempotency key (spec 4.2): the earlier command answers a repeat.
CREATE UNIQUE INDEX device_commands_idempotency ON device_commands(project_id, mode, device_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Firmware releases are organization-scoped (spec 2.1 fw_), shared by its projects and
-- both modes; the file sits under the data dir, named by id, checked by sha256.
CREATE TABLE firmware_releases (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  version TEXT NOT NULL,
  model TEXT NOT NULL CHECK (model IN ('parley_pin', 'parley_note')),
  notes TEXT,
  sha256 TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  published_at TEXT,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX firmware_releases_version ON firmware_releases(organization_id, model, version);
CREATE INDEX firmware_releases_page ON firmware_releases(organization_id, created_at DESC, id DESC);

-- OTA assignments (spec 2.11, 3.5): pending -> delivered -> applied | failed, or cancelled.
CREATE TABLE ota_assignments (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  device_id TEXT NOT NULL REFERENCES devices(id),
  firmware_release_id TEXT NOT NULL REFERENCES firmware_releases(id),
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'applied', 'failed', 'cancelled')),
  progress TEXT,
  assigned_at TEXT NOT NULL,
  delivered_at TEXT,
  applied_at TEXT,
  failed_at TEXT,
  cancelled_at TEXT,
  error_message TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX ota_assignments_page ON ota_assignments(project_id, mode, device_id, created_at DESC, id DESC);
-- One assignment in flight per device (spec 3.5); the index makes a race lose with a constraint error.
CREATE UNIQUE INDEX ota_assignments_in_flight ON ota_assignments(device_id) WHERE status IN ('pending', 'delivered');

-- Device events fire once per episode: set when device.low_battery / device.offline is
-- recorded, cleared when the battery is back at 20 or the device heartbeats again.
ALTER TABLE devices ADD COLUMN low_battery_notified_at TEXT;
ALTER TABLE devices ADD COLUMN offline_notified_at TEXT;
