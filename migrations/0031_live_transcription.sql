-- Live transcription of streaming recordings (issue 30, decision 162).
-- One row per live transcription: how far the incremental job has got. `chunks_used` chunks
-- (0..n-1, in order) have been decoded; audio before `committed_seconds` is transcribed
-- (the end of the last closed speech region). It changes in the same transaction as the
-- segments it produced, so a restart resumes from here without duplicating any.
CREATE TABLE live_progress (
  transcription_id TEXT PRIMARY KEY REFERENCES transcriptions(id) ON DELETE CASCADE,
  recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  chunks_used INTEGER NOT NULL DEFAULT 0,
  used_digests TEXT NOT NULL DEFAULT '[]',     -- JSON: the SHA-256 of each chunk used, to notice one replaced by other bytes after use
  committed_seconds REAL NOT NULL DEFAULT 0,
  waiting TEXT,                             -- why live work stopped and the audio waits for completion (a format that does not stream)
  updated_at TEXT NOT NULL
);
CREATE INDEX live_progress_recording ON live_progress(recording_id);

-- Provisional segments, in the order they were transcribed; seq is the SSE event id.
-- They go with the transcription (and so with the recording) by ON DELETE CASCADE.
CREATE TABLE live_segments (
  transcription_id TEXT NOT NULL REFERENCES transcriptions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  start REAL NOT NULL,
  "end" REAL NOT NULL,
  text TEXT NOT NULL,
  confidence REAL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (transcription_id, seq)
);
