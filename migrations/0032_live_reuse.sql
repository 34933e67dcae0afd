-- Completion reuses the live work (issue 30, decision 173).
-- `used_sizes` (JSON, bytes of each chunk used, beside `used_digests`) lets the whole-file run
-- check that the verified file begins with exactly the chunks that were transcribed.
-- `language` is the one the transcriber reported for the committed regions, for a completion
-- whose tail holds no speech (no transcriber call to report one).
ALTER TABLE live_progress ADD COLUMN used_sizes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE live_progress ADD COLUMN language TEXT;
-- Provisional speakers while streaming (decision 175): each live segment's speaker as the
-- voiceprints heard so far tell it (null: too little speech to tell a voice by), and the
-- prints behind them (JSON, per speaker SPEAKER_n: its latest region prints), so a restart
-- goes on labelling as before. The final speakers come with the completed transcription.
ALTER TABLE live_segments ADD COLUMN speaker TEXT;
ALTER TABLE live_progress ADD COLUMN speaker_prints TEXT NOT NULL DEFAULT '[]';
