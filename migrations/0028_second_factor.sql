-- A second factor for local dashboard accounts (issue 32 item 6, decision 151): TOTP (RFC 6238).
-- The secret is sealed with the server secret's key (read back to check each code, never shown
-- again after enrolment). It works only once confirmed with a first code.
CREATE TABLE admin_second_factors (
  admin_id TEXT PRIMARY KEY REFERENCES admins(id) ON DELETE CASCADE,
  secret_sealed TEXT NOT NULL,
  confirmed_at TEXT,             -- null while the enrolment waits for its first code
  last_step INTEGER,             -- the time step of the last code accepted: a code works once
  created_at TEXT NOT NULL
);

-- One-time recovery codes, shown once at enrolment; only their SHA-256 is kept (they are random,
-- 60 bits and more, so a fast hash is enough).
CREATE TABLE admin_recovery_codes (
  admin_id TEXT NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  used_at TEXT,
  PRIMARY KEY (admin_id, code_hash)
);

-- How a session was signed in: PARLEY_REQUIRE_MFA holds local ('password') sessions to enrolment
-- first; a session signed in through the identity provider ('sso') has that provider's factors.
ALTER TABLE admin_sessions ADD COLUMN signed_in_with TEXT NOT NULL DEFAULT 'password' CHECK (signed_in_with IN ('password', 'sso'));
