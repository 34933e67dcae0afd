-- Redaction's second pass (decision 108): the identifiers the local language model found in
-- a completed transcription, kept only where they stand verbatim in its text. One row a
-- transcription; deleted with it (they are content: erasure and retention take them too).
CREATE TABLE redaction_passes (
  transcription_id TEXT PRIMARY KEY REFERENCES transcriptions(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  status TEXT NOT NULL CHECK (status IN ('completed', 'failed')),
  model TEXT NOT NULL,
  identifiers TEXT NOT NULL DEFAULT '[]',  -- JSON [{kind, text}]
  error TEXT,                              -- why a failed pass found nothing
  created_at TEXT NOT NULL
);
