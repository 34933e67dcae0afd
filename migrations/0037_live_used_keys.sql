-- Live passes hash only the chunks they have not hashed (issue 30, decision 194).
-- `used_keys` (JSON, beside `used_digests` and `used_sizes`): the storage key each used chunk
-- was read from. A chunk sent again is stored under a new key, so a chunk whose key is the one
-- recorded has the recorded bytes, and its digest and size are carried instead of read again.
ALTER TABLE live_progress ADD COLUMN used_keys TEXT NOT NULL DEFAULT '[]';
