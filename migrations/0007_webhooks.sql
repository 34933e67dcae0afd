-- Webhook endpoints (spec 2.11, 4.6). The signing secret must be read back to sign,
-- so it is sealed with the server secret (AES-GCM), never stored in clear.
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  url TEXT NOT NULL,
  events TEXT NOT NULL,                      -- JSON array of event types or ["*"]
  include_device_events INTEGER NOT NULL DEFAULT 0,
  secret_sealed TEXT NOT NULL,
  failing_since TEXT,                        -- first failed attempt since the last success
  disabled_at TEXT,                          -- set after 3 days of continuous failure
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_page ON webhook_endpoints(project_id, mode, created_at DESC, id DESC);

-- One row per (endpoint, event): the durable delivery schedule. Fan-out inserts these
-- in the transaction that marks events.dispatched_at, so an event is fanned out once.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count INTEGER NOT NULL DEFAULT 0,
  attempts TEXT NOT NULL DEFAULT '[]',       -- JSON log of the latest attempts
  next_attempt_at TEXT,                      -- NULL once succeeded or failed
  lease_until TEXT,                          -- an attempt in flight (expires if the process dies)
  leased_by TEXT,
  completed_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (endpoint_id, event_id)
);
-- Each endpoint's due deliveries, oldest first: the dispatcher takes a few per endpoint.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(endpoint_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_page ON webhook_deliveries(endpoint_id, created_at DESC, id DESC);
