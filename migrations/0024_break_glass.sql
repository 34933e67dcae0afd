-- Break-glass grants (issue 32, decision 137): a person whose role does not see content
-- (compliance, viewer) opens one for one end user, with a reason, for a while; until it
-- expires or is closed, their session reads that end user's content. Rows stay after
-- closing and after the end user is erased, as the record of who looked and why (like the
-- audit log, they hold ids and the opener's words, not the end user's content). The
-- administrator is named by id and email without a foreign key, so the record outlives the
-- account; the project's deletion takes them (ON DELETE CASCADE).
CREATE TABLE break_glass_grants (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  end_user_id TEXT NOT NULL,
  admin_id TEXT NOT NULL,
  admin_email TEXT NOT NULL,
  reason TEXT NOT NULL,
  opened_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  closed_at TEXT,
  closed_by TEXT
);
CREATE INDEX break_glass_grants_tenant ON break_glass_grants(project_id, mode, opened_at, id);
CREATE INDEX break_glass_grants_open ON break_glass_grants(admin_id, project_id, mode, expires_at) WHERE closed_at IS NULL;
