-- Dashboard administrators (decision 094): people who run the appliance from /dashboard.
-- Appliance-wide: an administrator may act in any project, one project and mode at a time.
CREATE TABLE admins (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT NOT NULL,   -- Bun.password (Argon2id, PHC string)
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- A signed-in browser. The cookie holds a random token; only its SHA-256 is kept here.
-- The selected project and mode are the session's, so a URL the browser fetches by itself
-- (an <audio> src) acts in the same tenant as the page.
CREATE TABLE admin_sessions (
  id TEXT PRIMARY KEY,
  admin_id TEXT NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  project_id TEXT REFERENCES projects(id),
  mode TEXT NOT NULL DEFAULT 'test' CHECK (mode IN ('test', 'live')),
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE INDEX admin_sessions_admin ON admin_sessions(admin_id);
