-- Uploads are hashed once, by verification, over what storage holds: the PUT no longer
-- hashes as the bytes stream in (on CPUs without SHA extensions SHA-256 ran at about a
-- third of disk speed and halved upload throughput), so these copies have no source.
ALTER TABLE recordings DROP COLUMN staged_sha256;
ALTER TABLE recording_chunks DROP COLUMN sha256;
