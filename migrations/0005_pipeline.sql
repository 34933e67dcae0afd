-- The processing pipeline (issue 5): transcriptions of a recording's audio and summaries
-- of a transcription. Rows go with their recording (ON DELETE CASCADE), so deleting a
-- recording deletes its transcriptions and summaries (spec 4.3).
CREATE TABLE transcriptions (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  end_user_id TEXT,             -- copied from the recording: end-user-scoped keys filter on it
  status TEXT NOT NULL CHECK (status IN ('processing', 'completed', 'failed')),
  requested_language TEXT,      -- NULL: detect
  language TEXT,
  text TEXT,
  duration_seconds REAL,
  segments TEXT NOT NULL DEFAULT '[]',  -- JSON [{start, end, text, speaker, confidence}]
  speakers TEXT NOT NULL DEFAULT '[]',  -- JSON [{id, label}]
  error TEXT,                   -- JSON {code, message}
  model TEXT,
  diarization TEXT,             -- diarizer model name, or 'none' (every segment SPEAKER_1)
  created_at TEXT NOT NULL,
  started_at TEXT,
  completed_at TEXT,
  failed_at TEXT
);
CREATE INDEX transcriptions_page ON transcriptions(project_id, mode, created_at DESC, id DESC);
CREATE INDEX transcriptions_recording ON transcriptions(recording_id, created_at DESC);
-- One run at a time per recording: reprocessing waits for the current one to end.
CREATE UNIQUE INDEX transcriptions_one_processing ON transcriptions(recording_id) WHERE status = 'processing';

-- One summary per transcription and template: a new request re-runs it under the same id
-- (run counts the re-runs, so a stale job never overwrites a newer result).
CREATE TABLE summaries (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  transcription_id TEXT NOT NULL REFERENCES transcriptions(id) ON DELETE CASCADE,
  recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  end_user_id TEXT,
  template TEXT NOT NULL,
  format TEXT NOT NULL,         -- summary, or medical_note for the clinical template
  status TEXT NOT NULL CHECK (status IN ('processing', 'completed', 'failed')),
  run INTEGER NOT NULL DEFAULT 1,
  text TEXT,
  structured TEXT,              -- JSON output of the template's schema
  error TEXT,                   -- JSON {code, message}
  model TEXT,
  prompt_version TEXT NOT NULL,
  created_at TEXT NOT NULL,
  started_at TEXT,
  completed_at TEXT,
  failed_at TEXT
);
CREATE UNIQUE INDEX summaries_template ON summaries(transcription_id, template);
CREATE INDEX summaries_page ON summaries(project_id, mode, created_at DESC, id DESC);
