-- Erasure (decision 078). FTS5 removes a deleted chunk's words from its index segments at
-- once, instead of adding a delete marker and leaving them in place until segments merge:
-- with PRAGMA secure_delete the freed bytes are then zeroed too. Persistent (it lives in
-- chunks_fts_config); needs SQLite 3.42 or later to write the index.
INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('secure-delete', 1);
-- Words of chunks deleted before this version are still in the segments: a merge of every
-- segment into one drops them.
INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize');

-- Deleting a recording looks for the Ask messages that quoted it among its tenant's.
CREATE INDEX ask_messages_tenant ON ask_messages(project_id, mode, created_at);
