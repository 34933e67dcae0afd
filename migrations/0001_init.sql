-- Tenancy: one organization ("default") holds projects; every data row carries
-- project_id and mode so test and live data never meet (spec 5 rule 1).
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  plan TEXT NOT NULL DEFAULT 'standard' CHECK (plan IN ('standard', 'enterprise')),
  created_at TEXT NOT NULL
);

CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);

-- Every bearer credential (API keys, device tokens, upload tokens, reset credentials)
-- lives here as a SHA-256 hash; the full value is shown once and never stored.
CREATE TABLE credentials (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL CHECK (kind IN ('secret', 'restricted', 'device', 'upload', 'reset')),
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  hint TEXT NOT NULL,
  name TEXT,
  scopes TEXT,               -- JSON array for restricted keys; NULL means every scope
  end_user_id TEXT,          -- end-user-scoped keys, device tokens
  device_id TEXT,            -- device tokens
  recording_id TEXT,         -- upload tokens
  command_id TEXT,           -- reset completion credentials
  expires_at TEXT,
  used_at TEXT,              -- single-use credentials
  revoked_at TEXT,
  last_used_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX credentials_project ON credentials(project_id, mode, kind);
CREATE INDEX credentials_device ON credentials(device_id) WHERE device_id IS NOT NULL;

CREATE TABLE end_users (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  external_id TEXT,
  name TEXT,
  email TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
-- external_id is unique among live (non-deleted) end users; deletion releases it.
CREATE UNIQUE INDEX end_users_external_id ON end_users(project_id, mode, external_id)
  WHERE deleted_at IS NULL AND external_id IS NOT NULL;
CREATE INDEX end_users_page ON end_users(project_id, mode, created_at DESC, id DESC);

CREATE TABLE idempotency_keys (
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  operation TEXT NOT NULL,     -- method and path, e.g. "POST /v1/devices/dev_x/bind"
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
  response_status INTEGER,
  response_body TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (project_id, mode, operation, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys(created_at);

-- The transactional outbox: an event is written in the same transaction as the state
-- change it reports; webhook delivery reads from here.
CREATE TABLE events (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL,
  dispatched_at TEXT
);
CREATE INDEX events_undispatched ON events(created_at) WHERE dispatched_at IS NULL;
CREATE INDEX events_page ON events(project_id, mode, created_at DESC, id DESC);

-- The durable job queue (src/jobs/queue.ts).
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'dead')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  run_at TEXT NOT NULL,
  lease_until TEXT,
  leased_by TEXT,
  last_error TEXT,
  dedupe_key TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX jobs_due ON jobs(state, run_at);
-- At most one unfinished job per dedupe key: enqueueing the same work twice is a no-op.
CREATE UNIQUE INDEX jobs_dedupe ON jobs(dedupe_key) WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running');
