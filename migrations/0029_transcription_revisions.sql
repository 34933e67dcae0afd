-- Corrections with history (issue 25, decision 154). The transcriptions row holds the latest
-- revision (what search, Ask, summaries and exports read) and its number; every revision,
-- the machine's original (0) included, is kept here whole once a first correction is made,
-- and never changed. Deleted with the transcription (erasure and retention take them too).
CREATE TABLE transcription_revisions (
  transcription_id TEXT NOT NULL REFERENCES transcriptions(id) ON DELETE CASCADE,
  revision INTEGER NOT NULL CHECK (revision >= 0),
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  text TEXT,
  segments TEXT NOT NULL,                  -- JSON, as transcriptions.segments
  speakers TEXT NOT NULL,                  -- JSON, as transcriptions.speakers
  changes TEXT NOT NULL DEFAULT '[]',      -- JSON [{index, field, from, to}]
  restored_from INTEGER,                   -- an undo: the revision this one restores
  author TEXT,                             -- JSON {type, id, email}; null for the machine's original
  created_at TEXT NOT NULL,
  PRIMARY KEY (transcription_id, revision)
);

ALTER TABLE transcriptions ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
-- The transcriber model file's SHA-256 as installed when it ran (the legal export certifies it).
ALTER TABLE transcriptions ADD COLUMN model_sha256 TEXT;
