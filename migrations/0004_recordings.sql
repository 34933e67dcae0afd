-- Recordings (spec 2.7) and the bytes behind them. storage_key names the object in
-- src/storage: while an upload is staged it is the staged object; once status is
-- uploaded it is the verified original (sha256 and file_size_bytes describe it).
CREATE TABLE recordings (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  end_user_id TEXT,
  device_id TEXT,
  name TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'streaming', 'uploaded', 'processing', 'completed', 'failed', 'integrity_failure')),
  duration_seconds REAL,
  file_size_bytes INTEGER,
  recorded_at TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  consent_obtained INTEGER,
  upload_method TEXT,
  source TEXT NOT NULL,
  mime_type TEXT,
  is_streaming INTEGER NOT NULL DEFAULT 0,
  chunk_count INTEGER NOT NULL DEFAULT 0,
  format TEXT,
  codec TEXT,
  sha256 TEXT,
  error TEXT,                 -- JSON {code, message}: upload_integrity_failed, audio_format_unsupported
  storage_key TEXT,
  staged_size INTEGER,        -- size and hash measured while the staged object streamed in
  staged_sha256 TEXT,
  completion TEXT,            -- JSON of the accepted upload-complete fields (retries compare against it)
  verification TEXT CHECK (verification IN ('pending')),
  uploaded_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX recordings_page ON recordings(project_id, mode, created_at DESC, id DESC);
CREATE INDEX recordings_end_user ON recordings(project_id, mode, end_user_id, created_at DESC);
CREATE INDEX recordings_device ON recordings(project_id, mode, device_id, created_at DESC);

-- Numbered chunks of a streaming upload, assembled in order at completion.
CREATE TABLE recording_chunks (
  recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  chunk_index INTEGER NOT NULL,
  storage_key TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (recording_id, chunk_index)
);

-- One row per issued upload URL: what the up_ token (credentials.id) may write, and
-- what arrived. The token itself lives hashed in credentials like every bearer value.
CREATE TABLE recording_uploads (
  credential_id TEXT PRIMARY KEY,
  recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  chunk_index INTEGER,          -- NULL for a whole-file upload
  content_type TEXT,
  declared_size INTEGER,
  storage_key TEXT,             -- set once the bytes are stored
  received_size INTEGER,
  received_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX recording_uploads_recording ON recording_uploads(recording_id);
