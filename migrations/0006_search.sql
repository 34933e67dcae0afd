-- Search and Ask (issue 6). Transcript chunks are the unit of retrieval; a keyword index
-- (FTS5) and a vector index (sqlite-vec) mirror them and are kept in sync by triggers, so
-- deleting a recording (chunks go by ON DELETE CASCADE) empties both indexes too.
CREATE TABLE chunks (
  rowid INTEGER PRIMARY KEY,    -- the key FTS5 and vec0 use
  id TEXT NOT NULL UNIQUE,      -- chk_
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  end_user_id TEXT,
  recording_id TEXT NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  transcription_id TEXT NOT NULL REFERENCES transcriptions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,         -- position in the transcript
  start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL,
  speaker TEXT,                 -- dominant speaker; NULL when mixed or unknown
  recorded_at TEXT,
  text TEXT NOT NULL,
  -- One token naming (project, mode, end user), indexed by FTS5 so a keyword search only
  -- walks that end user's postings instead of filtering every match afterwards.
  owner_token TEXT NOT NULL,
  -- The search_index generation this chunk's vector was made in; 0 = no vector yet.
  -- A model change bumps the generation and the re-index job embeds chunks behind it.
  embedded_generation INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX chunks_recording ON chunks(recording_id, seq);
CREATE INDEX chunks_stale ON chunks(embedded_generation);

CREATE VIRTUAL TABLE chunks_fts USING fts5(owner_token, text, content = 'chunks', content_rowid = 'rowid', tokenize = 'porter unicode61');

-- The vector index. Partition keys keep each end user's vectors apart, so a KNN scan
-- reads one end user's vectors only. The dimension is the default embedder's; a model
-- with another dimension gets this table rebuilt by the re-index (src/modules/search/indexer.ts).
CREATE VIRTUAL TABLE chunk_vectors USING vec0(
  chunk_rowid INTEGER PRIMARY KEY,
  project_id TEXT PARTITION KEY,
  mode TEXT PARTITION KEY,
  end_user_id TEXT PARTITION KEY,
  recording_id TEXT,
  recorded_at TEXT,
  embedding FLOAT[384]          -- unit vectors, so L2 orders exactly as cosine (and runs faster)
);

CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts (rowid, owner_token, text) VALUES (new.rowid, new.owner_token, new.text);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts (chunks_fts, rowid, owner_token, text) VALUES ('delete', old.rowid, old.owner_token, old.text);
  DELETE FROM chunk_vectors WHERE chunk_rowid = old.rowid;
END;

-- Which embedding model and dimension the vector index holds (one row).
CREATE TABLE search_index (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  model TEXT,                   -- NULL until the first chunk is embedded
  dimension INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
INSERT INTO search_index (id, model, dimension, generation, updated_at) VALUES (1, NULL, 384, 1, '1970-01-01T00:00:00.000Z');

-- Ask (spec 2.9, 4.5).
CREATE TABLE ask_sessions (
  id TEXT PRIMARY KEY,          -- as_
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  end_user_id TEXT,             -- owner and, for library scope, the retrieval boundary
  scope_type TEXT NOT NULL CHECK (scope_type IN ('recording', 'library', 'selected')),
  recording_ids TEXT NOT NULL DEFAULT '[]',  -- JSON array; immutable
  recording_title TEXT,
  title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0,
  last_message_at TEXT,
  last_model TEXT,
  last_provider TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX ask_sessions_page ON ask_sessions(project_id, mode, created_at DESC, id DESC);

CREATE TABLE ask_messages (
  id TEXT PRIMARY KEY,          -- msg_
  session_id TEXT NOT NULL REFERENCES ask_sessions(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  content TEXT NOT NULL,
  parts TEXT NOT NULL DEFAULT '[]',          -- JSON [{type: text, text} | {type: citation, recording_id, start_ms}]
  context_refs TEXT NOT NULL DEFAULT '[]',   -- JSON [{type: recording, id}] (reserved, stored)
  sources TEXT NOT NULL DEFAULT '[]',        -- JSON search results given to the model
  tokens TEXT,                               -- JSON {input, output, cached}
  model TEXT,
  provider TEXT,
  finish_reason TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX ask_messages_session ON ask_messages(session_id, created_at DESC, id DESC);
