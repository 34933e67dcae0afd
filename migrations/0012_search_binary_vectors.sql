-- Binary-quantized vectors beside the float ones (decision 066). A large end user's KNN
-- scans one bit per dimension, then rescores the best candidates with the exact floats.
-- vec0 cannot add a column, so the table is rebuilt and the vectors copied across.
CREATE TABLE chunk_vectors_copy AS
  SELECT chunk_rowid, project_id, mode, end_user_id, recording_id, recorded_at, embedding FROM chunk_vectors
  WHERE (SELECT dimension FROM search_index WHERE id = 1) = 384;
DROP TABLE chunk_vectors;
CREATE VIRTUAL TABLE chunk_vectors USING vec0(
  chunk_rowid INTEGER PRIMARY KEY,
  project_id TEXT PARTITION KEY,
  mode TEXT PARTITION KEY,
  end_user_id TEXT PARTITION KEY,
  recording_id TEXT,
  recorded_at TEXT,
  embedding FLOAT[384],         -- unit vectors, so L2 orders exactly as cosine (and runs faster)
  embedding_bits BIT[384]       -- vec_quantize_binary(embedding): the sign of each dimension
);
INSERT INTO chunk_vectors (chunk_rowid, project_id, mode, end_user_id, recording_id, recorded_at, embedding, embedding_bits)
  SELECT chunk_rowid, project_id, mode, end_user_id, recording_id, recorded_at, embedding, vec_quantize_binary(embedding) FROM chunk_vectors_copy;
DROP TABLE chunk_vectors_copy;

-- An index of another dimension (a model other than the default) cannot be rebuilt by a
-- file that must name its dimension: it is left empty at 384 with no model and a new
-- generation, so the embedder's check at start rebuilds it at the model's dimension and the
-- re-index embeds every chunk again (decision 061). Search answers by keywords meanwhile.
UPDATE search_index SET model = NULL, dimension = 384, generation = generation + 1 WHERE dimension <> 384;
