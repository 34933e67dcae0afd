-- Speakers (issue 17): the diarizer's own turns beside the segments, and the speaker counts a
-- POST /transcriptions asked for (NULL: the configuration's). diarization now says which
-- kind of diarizer ran; before, the only one that ever ran in production was 'none'.
ALTER TABLE transcriptions ADD COLUMN speaker_turns TEXT NOT NULL DEFAULT '[]';  -- JSON [{speaker, start, end}]
ALTER TABLE transcriptions ADD COLUMN requested_min_speakers INTEGER;
ALTER TABLE transcriptions ADD COLUMN requested_max_speakers INTEGER;
UPDATE transcriptions SET diarization = 'none' WHERE diarization IS NOT NULL AND diarization NOT IN ('classic', 'neural', 'none');

-- Known voices (decision 098): a name, optionally the end user it is, and voiceprints taken
-- from spans of recordings. A voice's prints go with it, and a print with the recording it
-- was taken from (the recordingErased cascade) or the end user it belongs to.
CREATE TABLE voices (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  end_user_id TEXT,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX voices_page ON voices(project_id, mode, created_at DESC, id DESC);
CREATE TABLE voiceprints (
  id INTEGER PRIMARY KEY,
  voice_id TEXT NOT NULL REFERENCES voices(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,           -- the diarizer kind whose print this is (classic, neural)
  print TEXT NOT NULL,          -- JSON array of numbers
  recording_id TEXT,
  start_ms INTEGER,
  end_ms INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX voiceprints_voice ON voiceprints(voice_id);
CREATE INDEX voiceprints_recording ON voiceprints(recording_id);
