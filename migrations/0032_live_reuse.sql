-- Completion reuses the live work (issue 30, decision 173).
-- `used_sizes` (JSON, bytes of each chunk used, beside `used_digests`) lets the whole-file run
-- check that the verified file begins with exactly the chunks that were transcribed.
-- `language` is the one the transcriber reported for the committed regions, for a completion
-- whose tail holds no speech (no transcriber call to report one).
ALTER TABLE live_progress ADD COLUMN used_sizes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE live_progress ADD COLUMN language TEXT;
