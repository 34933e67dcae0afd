-- Encryption at rest (decision 105): each project's AES-256 data key, wrapped by the master
-- key (PARLEY_MASTER_KEY_FILE, or derived from the server secret). Deleting the project
-- deletes its key, and with it the only way to read its audio (cryptographic erasure).
CREATE TABLE data_keys (
  project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  wrapped_key BLOB NOT NULL,
  master_key_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);
