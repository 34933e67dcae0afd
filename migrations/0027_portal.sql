-- The wearer's portal at /me (issue 32 item 5, decision 147). A wearer is an end user; they
-- sign in with a one-time link an administrator issues (or SSO by their email) and act with
-- the powers of a key confined to them. Both tables keep only tokens' SHA-256s, never tokens.
-- Rows follow their end user: ON DELETE CASCADE when a project's deletion removes it, and the
-- end user's deletion removes them (the portal's endUserDeleted cascade).

-- A one-time sign-in link: good until expires_at (PARLEY_INVITE_HOURS) and for one use (used_at).
CREATE TABLE portal_invites (
  id TEXT PRIMARY KEY,
  end_user_id TEXT NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT
);
CREATE INDEX portal_invites_end_user ON portal_invites(end_user_id);

-- A wearer's signed-in browser: apart from administrators' admin_sessions, with its own cookie.
CREATE TABLE portal_sessions (
  id TEXT PRIMARY KEY,
  end_user_id TEXT NOT NULL REFERENCES end_users(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE INDEX portal_sessions_end_user ON portal_sessions(end_user_id);
