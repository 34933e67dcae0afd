-- Access audit log (decision 102): append-only, hash-chained. `seq` is the chain order;
-- each row stores the SHA-256 of its predecessor's canonical form (prev_hash) and of its
-- own (hash). Rows hold ids, never content, and reference nothing, so no cascade, erasure
-- or retention ever removes one.
CREATE TABLE audit_events (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  project_id TEXT,
  mode TEXT,
  actor_type TEXT NOT NULL,
  actor_id TEXT,
  admin_email TEXT,
  device_id TEXT,
  action TEXT NOT NULL,
  resource_ids TEXT NOT NULL,
  request_id TEXT,
  client_address TEXT,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX audit_events_tenant ON audit_events(project_id, mode, created_at, id);

-- Append-only against the application's own mistakes; someone who edits the file directly
-- is caught by the chain instead (`parley audit verify`).
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;

-- Retention may erase a recording's audio alone, keeping its transcripts (decision 103).
ALTER TABLE recordings ADD COLUMN audio_erased_at TEXT;

-- Legal holds (decision 103): while released_at is null, the recordings a hold covers are
-- neither deleted nor expired. A hold names one target; for a recording, its end user and
-- device are copied so a DELETE of either finds the holds on their recordings.
CREATE TABLE legal_holds (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL,
  matter TEXT NOT NULL,
  note TEXT,
  end_user_id TEXT,
  device_id TEXT,
  recording_id TEXT,
  recording_end_user_id TEXT,
  recording_device_id TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  released_at TEXT,
  released_by TEXT
);
CREATE INDEX legal_holds_tenant ON legal_holds(project_id, mode, created_at, id);
CREATE INDEX legal_holds_active ON legal_holds(project_id, mode) WHERE released_at IS NULL;

-- eDiscovery exports: a zip of the selected recordings' content with a manifest and a
-- chain-of-custody extract of the audit log, built by a job into storage. The optional
-- passphrase is kept encrypted with the server secret only until the job has used it.
CREATE TABLE exports (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL,
  status TEXT NOT NULL,
  matter TEXT,
  filter TEXT NOT NULL,
  recording_ids TEXT NOT NULL,
  encrypted INTEGER NOT NULL,
  passphrase_sealed TEXT,
  storage_key TEXT,
  sha256 TEXT,
  size_bytes INTEGER,
  error TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  completed_at TEXT,
  failed_at TEXT
);
CREATE INDEX exports_tenant ON exports(project_id, mode, created_at, id);
