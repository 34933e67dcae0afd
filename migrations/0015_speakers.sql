-- Speakers (issue 17): the diarizer's own turns beside the segments, and the speaker counts a
-- POST /transcriptions asked for (NULL: the configuration's). diarization now says which
-- kind of diarizer ran; before, the only one that ever ran in production was 'none'.
ALTER TABLE transcriptions ADD COLUMN speaker_turns TEXT NOT NULL DEFAULT '[]';  -- JSON [{speaker, start, end}]
ALTER TABLE transcriptions ADD COLUMN requested_min_speakers INTEGER;
ALTER TABLE transcriptions ADD COLUMN requested_max_speakers INTEGER;
UPDATE transcriptions SET diarization = 'none' WHERE diarization IS NOT NULL AND diarization NOT IN ('classic', 'neural', 'none');
