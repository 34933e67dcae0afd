-- A year of memory (issue 27, decision 192): an end user's library past a size threshold
-- gets a cell index. Its vectors are split into cells by a two-level k-means quantizer
-- trained on the library itself; a search ranks the int8 copies of the vectors in the few
-- cells nearest the query (an inverted file).
-- One row per index; a rebuild writes a new row and drops the old one once the new is ready.
CREATE TABLE vector_libraries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: connections cache centroids by id
  project_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  end_user_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('building', 'ready')),
  dimension INTEGER NOT NULL,
  coarse_count INTEGER NOT NULL,
  fine_per_coarse INTEGER NOT NULL,
  coarse BLOB NOT NULL,                  -- float32[coarse_count][dimension], unit length
  fine BLOB NOT NULL,                    -- float32[coarse_count * fine_per_coarse][dimension]: one per cell
  chunk_count INTEGER NOT NULL,          -- chunks when it was built: a library that changed by a quarter is rebuilt
  created_at TEXT NOT NULL
);
CREATE INDEX vector_libraries_owner ON vector_libraries(project_id, mode, end_user_id);

-- Each chunk's cell and int8 vector, per index of its end user. recording_id and recorded_at
-- are vec0's copies ("" for an unknown date), so the search filters apply here as there.
CREATE TABLE chunk_cells (
  library_id INTEGER NOT NULL REFERENCES vector_libraries(id) ON DELETE CASCADE,
  cell INTEGER NOT NULL,
  chunk_rowid INTEGER NOT NULL,
  recording_id TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  vector BLOB NOT NULL,                  -- int8[dimension]: round(400 x the unit vector), clipped
  PRIMARY KEY (library_id, cell, chunk_rowid)
) WITHOUT ROWID;
CREATE INDEX chunk_cells_chunk ON chunk_cells(chunk_rowid);

-- Each library's size and rowids, read by the periodic check (every 5 minutes) and by a
-- build: without it both scan every chunk's text (~1 s of CPU at 1M chunks).
CREATE INDEX chunks_owner ON chunks(project_id, mode, end_user_id);

-- A deleted chunk (erasure, re-transcription) leaves every index at once, as it leaves
-- chunks_fts and chunk_vectors (chunks_ad, 0006).
CREATE TRIGGER chunks_ad_cells AFTER DELETE ON chunks BEGIN
  DELETE FROM chunk_cells WHERE chunk_rowid = old.rowid;
END;
