-- Cells in proportion to the library (decision 204): each coarse centroid of a cell index has
-- as many fine centroids (cells) as its share of the library calls for, not one count for all,
-- so `fine_per_coarse` gives way to `fine_counts` (uint32[coarse_count], little-endian); and
-- a search probes cells until they hold a budget of chunks, by `cell_sizes` (uint32 per cell,
-- as its build filed them; empty while building). The indexes built before are dropped
-- rather than read two ways: the periodic check (every 5 minutes) builds them again, and
-- their searches use the whole-library bit scan meanwhile.
DELETE FROM chunk_cells;
DELETE FROM vector_libraries;
ALTER TABLE vector_libraries DROP COLUMN fine_per_coarse;
ALTER TABLE vector_libraries ADD COLUMN fine_counts BLOB NOT NULL DEFAULT x'';
ALTER TABLE vector_libraries ADD COLUMN cell_sizes BLOB NOT NULL DEFAULT x'';
