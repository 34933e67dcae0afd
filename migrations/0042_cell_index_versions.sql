-- The version of each cell index's rows (decision 216): a counter every insert into and
-- delete from chunk_cells moves, by trigger, whatever the path (a chunk filed, re-embedded,
-- erased, a recording re-transcribed). A server holds a ready index's int8 codes in memory;
-- a search uses them only while the version it loaded at is still the index's, so a copy
-- that missed a change is never read, and no write path has to remember the copy exists.
-- A table of its own: vector_libraries rows carry the centroids (~1.5 MB at 1M chunks), and
-- a counter there would rewrite them on every chunk filed.
CREATE TABLE cell_index_versions (
  library_id INTEGER PRIMARY KEY REFERENCES vector_libraries(id) ON DELETE CASCADE,
  version INTEGER NOT NULL DEFAULT 0
);
INSERT INTO cell_index_versions (library_id) SELECT id FROM vector_libraries;
CREATE TRIGGER vector_libraries_ai_version AFTER INSERT ON vector_libraries BEGIN
  INSERT INTO cell_index_versions (library_id) VALUES (new.id);
END;
CREATE TRIGGER chunk_cells_ai_version AFTER INSERT ON chunk_cells BEGIN
  UPDATE cell_index_versions SET version = version + 1 WHERE library_id = new.library_id;
END;
CREATE TRIGGER chunk_cells_ad_version AFTER DELETE ON chunk_cells BEGIN
  UPDATE cell_index_versions SET version = version + 1 WHERE library_id = old.library_id;
END;
-- No path updates a code in place today (a new vector is a delete and an insert); one that did would move the version too.
CREATE TRIGGER chunk_cells_au_version AFTER UPDATE OF library_id, cell, chunk_rowid, vector ON chunk_cells BEGIN
  UPDATE cell_index_versions SET version = version + 1 WHERE library_id IN (old.library_id, new.library_id);
END;
