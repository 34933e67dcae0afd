import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { Tenant } from "../../tenancy";
import { cellCount, cellOf, coarseCount, fineCounts, firstCells, nearestCells, type Quantizer, quantizerShape, trainQuantizer } from "./cell-quantizer";
import { currentCellCodes, forgetCellCodes, loadCellCodes, nearestHeld } from "./cell-codes";
import { type ChunkFilter, chunkFilterSql } from "./store";

/**
 * The cell index of a large library (decision 192): an inverted file of int8 vectors.
 * Past CELL_INDEX_MIN_CHUNKS chunks an end user's vectors are split into cells of about
 * CHUNKS_PER_CELL by a quantizer trained on the library; a search ranks the int8 copies
 * of the vectors in the cells nearest the query, as many as hold PROBED_CELLS average
 * cells' worth of chunks (decision 204), instead of the whole library.
 * No rescoring with the floats: at 1M chunks the float rows lie past the memory map, and
 * reading 96 of them cost more than ranking 16,000 int8 rows (and sign bits, 099's
 * candidates, found the true top 8 only ~68% of the time among 500 close neighbours).
 */
export const CELL_INDEX_MIN_CHUNKS = 200_000;
export const CHUNKS_PER_CELL = 1_000;
/**
 * Chunks scanned per search, in average cells: the nearest cells are probed until they
 * hold this many times the library's mean cell size (sizes as the build filed them), so a
 * query near crowded cells scans fewer of them and none scans much more than the budget
 * (decision 204). Each 1,000 int8 rows cost ~0.7-1 ms of CPU. Chosen by measurement
 * (bench/search.ts --tier 1m-one, decision 204): at 1M chunks recall@8 was 0.953 at 2,
 * 0.963 at 4, 0.967 at 8; 4 keeps a margin over the 0.95 floor for ~1 ms more than 2.
 */
export const PROBED_CELLS = 4;
/** Sampled vectors a cell's centroid is trained on (a 1M library trains on ~33k). */
const SAMPLE_PER_CELL = 32;
/** Vectors assigned per transaction while building: short write locks, the event loop free between them. */
const BUILD_BATCH = 2_000;
/** A library whose chunk count moved this far from its index's is indexed again (new cells, erased chunks' share gone from the centroids). */
const REBUILD_DRIFT = 0.25;

/** A library of one end user: the partition the cell index covers. */
export type LibraryOwner = Tenant & { endUserId: string };

type LibraryRow = { id: number; dimension: number; coarse: Uint8Array; fine_counts: Uint8Array; fine: Uint8Array; cell_sizes: Uint8Array };
/** An index: its centroids, and its cells' sizes when its build filed them (empty while building). */
type CellLibrary = { id: number; quantizer: Quantizer; cellSizes: Uint32Array; meanCellSize: number };
type Neighbour = { chunk_rowid: number; distance: number };

/**
 * int8 steps per unit of a vector component. A unit vector's components are about
 * 1/sqrt(dimension) (0.05 at 384); past +-127/400 (~6 standard deviations) they are clipped.
 * The rounding (+-0.00125 a component) moves a squared distance by ~0.002, a tenth of the
 * gap between neighbours in a crowded neighbourhood.
 */
const INT8_SCALE = 400;

/** The int8 copy a cell index ranks by. */
export function int8Of(v: Float32Array): Int8Array {
  return Int8Array.from(v, (x) => Math.max(-127, Math.min(127, Math.round(x * INT8_SCALE))));
}

const floats = (blob: Uint8Array) => new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
const uint32s = (blob: Uint8Array) => new Uint32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
const blob = (v: Float32Array | Uint32Array) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);

/**
 * Indexes per connection and id (ids are never reused, so an entry never goes stale, only
 * unused; its sizes are read again until its build has written them).
 */
const libraryCache = new WeakMap<Database, Map<number, CellLibrary>>();

function withSizes(library: Omit<CellLibrary, "cellSizes" | "meanCellSize">, sizes: Uint8Array): CellLibrary {
  const cellSizes = uint32s(sizes);
  return { ...library, cellSizes, meanCellSize: cellSizes.reduce((a, b) => a + b, 0) / cellCount(library.quantizer) };
}

/** The end user's ready cell index, if any (the newest, while a rebuild's old one is being dropped). */
export function readyCellLibrary(db: Database, owner: LibraryOwner): CellLibrary | null {
  const ids = db
    .query<{ id: number }, [string, string, string]>(
      "SELECT id FROM vector_libraries WHERE project_id = ? AND mode = ? AND end_user_id = ? AND state = 'ready' ORDER BY id DESC LIMIT 1",
    )
    .get(owner.projectId, owner.mode, owner.endUserId);
  return ids ? libraryById(db, ids.id) : null;
}

function libraryById(db: Database, id: number): CellLibrary | null {
  let cache = libraryCache.get(db);
  if (!cache) libraryCache.set(db, (cache = new Map()));
  const cached = cache.get(id);
  if (cached && cached.cellSizes.length > 0) return cached;
  let library: CellLibrary | null = null;
  if (cached) {
    const row = db.query<{ cell_sizes: Uint8Array }, [number]>("SELECT cell_sizes FROM vector_libraries WHERE id = ?").get(id);
    library = row && withSizes(cached, row.cell_sizes);
  } else {
    const row = db.query<LibraryRow, [number]>("SELECT id, dimension, coarse, fine_counts, fine, cell_sizes FROM vector_libraries WHERE id = ?").get(id);
    const quantizer = row && { dimension: row.dimension, coarse: floats(row.coarse), firstCell: firstCells(uint32s(row.fine_counts)), fine: floats(row.fine) };
    library = row && quantizer && withSizes({ id, quantizer }, row.cell_sizes);
  }
  if (library) cache.set(id, library);
  return library;
}

/**
 * The cells a search scans: the nearest the query first, until they hold `probes` average
 * cells' worth of chunks (at least one cell).
 */
export function probedCells(library: CellLibrary, query: Float32Array, probes: number): number[] {
  const budget = probes * library.meanCellSize;
  const cells: number[] = [];
  let chunks = 0;
  for (const cell of nearestCells(library.quantizer, query, cellCount(library.quantizer))) {
    if (cells.length > 0 && chunks >= budget) break;
    cells.push(cell);
    chunks += library.cellSizes[cell] ?? 0;
  }
  return cells;
}

/**
 * The `count` chunks nearest the query among the cells nearest it (probedCells), by L2 distance of the
 * int8 copies (scaled back to the float distance), or null when those cells hold fewer
 * (filters that leave few chunks there): the caller then scans the whole library. The
 * scan reads this index's rows only, so one end user's search never reaches another's.
 */
export function cellCandidates(
  db: Database,
  library: CellLibrary,
  filter: ChunkFilter,
  query: Float32Array,
  count: number,
  probes = PROBED_CELLS,
): Neighbour[] | null {
  if (query.length !== library.quantizer.dimension) return null;
  const cells = probedCells(library, query, probes);
  // The codes held in memory carry no recording or date: a filtered search reads its rows through SQL.
  const codes = filter.recordingIds || filter.recordedAfter || filter.recordedBefore ? null : currentCellCodes(db, codeLibrary(library));
  const found = codes ? nearestHeld(codes, cells, int8Of(query), count, INT8_SCALE) : sqlCandidates(db, library, filter, query, cells, count);
  return found.length === count ? found : null;
}

/** cellCandidates' ranking in SQL, over the index's rows of `cells` within the filters. */
function sqlCandidates(db: Database, library: CellLibrary, filter: ChunkFilter, query: Float32Array, cells: number[], count: number): Neighbour[] {
  const extra = chunkFilterSql(filter);
  return db
    .query<Neighbour, SQLQueryBindings[]>(
      `SELECT chunk_rowid, vec_distance_l2(vec_int8(vector), vec_int8(?)) / ${INT8_SCALE}.0 AS distance FROM chunk_cells
       WHERE library_id = ? AND cell IN (SELECT value FROM json_each(?))${extra.sql}
       ORDER BY distance, chunk_rowid LIMIT ?`,
    )
    .all(int8Of(query), library.id, JSON.stringify(cells), ...extra.params, count);
}

const codeLibrary = (library: CellLibrary) => ({
  id: library.id,
  dimension: library.quantizer.dimension,
  cells: cellCount(library.quantizer),
  cellSizes: library.cellSizes,
});

/**
 * Loads the codes of the end user's ready cell index into memory (decision 216), in the
 * background between `pause`s: after a build, and for every ready index when the server
 * starts (the periodic check). Returns whether they are held.
 */
export async function warmCellCodes(db: Database, owner: LibraryOwner, pause: () => Promise<void> = yieldToEventLoop): Promise<boolean> {
  const library = readyCellLibrary(db, owner);
  return library !== null && (await loadCellCodes(db, codeLibrary(library), pause));
}

/** The owners of every ready cell index. */
export function readyLibraryOwners(db: Database): LibraryOwner[] {
  return db
    .query<{ projectId: string; mode: Tenant["mode"]; endUserId: string }, []>(
      "SELECT DISTINCT project_id AS projectId, mode, end_user_id AS endUserId FROM vector_libraries WHERE state = 'ready'",
    )
    .all();
}

/** An erasure drops the codes held in memory with the rows (they are reloaded, without its chunks, on a later search). */
export { forgetCellCodes };

type Assignable = { rowid: number; project_id: string; mode: string; end_user_id: string | null; recording_id: string; recorded_at: string | null };

/**
 * Files freshly stored vectors into their end user's cell indexes (ready or being built),
 * so an index never misses a chunk embedded after it started. Runs inside storeVectors'
 * transaction, after the chunk's vec0 row is written.
 */
export function assignToCells(db: Database, chunks: Assignable[], vectors: Float32Array[]): void {
  const libraries = new Map<string, CellLibrary[]>();
  const insert = db.query("INSERT OR REPLACE INTO chunk_cells (library_id, cell, chunk_rowid, recording_id, recorded_at, vector) VALUES (?, ?, ?, ?, ?, ?)");
  chunks.forEach((c, i) => {
    if (c.end_user_id === null) return;
    const key = `${c.project_id}|${c.mode}|${c.end_user_id}`;
    let own = libraries.get(key);
    if (!own) {
      const ids = db
        .query<{ id: number }, [string, string, string]>("SELECT id FROM vector_libraries WHERE project_id = ? AND mode = ? AND end_user_id = ?")
        .all(c.project_id, c.mode, c.end_user_id);
      libraries.set(key, (own = ids.flatMap(({ id }) => libraryById(db, id) ?? [])));
    }
    for (const library of own) {
      if (library.quantizer.dimension !== vectors[i]!.length) continue;
      insert.run(library.id, cellOf(library.quantizer, vectors[i]!), c.rowid, c.recording_id, c.recorded_at ?? "", int8Of(vectors[i]!));
    }
  });
}

type StoredVector = { chunk_rowid: number; embedding: Uint8Array; recording_id: string; recorded_at: string };

/** vec0's rows of these chunks (those that have a vector), by point lookups. */
function storedVectors(db: Database, rowids: number[]): StoredVector[] {
  return db
    .query<StoredVector, [string]>(
      `SELECT v.chunk_rowid AS chunk_rowid, v.embedding AS embedding, v.recording_id AS recording_id, v.recorded_at AS recorded_at
       FROM json_each(?) AS j JOIN chunk_vectors AS v ON v.chunk_rowid = j.value`,
    )
    .all(JSON.stringify(rowids));
}

const libraryRowids = (db: Database, owner: LibraryOwner) =>
  db
    .query<{ rowid: number }, [string, string, string]>("SELECT rowid FROM chunks WHERE project_id = ? AND mode = ? AND end_user_id = ? ORDER BY rowid")
    .all(owner.projectId, owner.mode, owner.endUserId)
    .map((r) => r.rowid);

export type BuildOptions = {
  /** Runs between batches; the server yields to its event loop there. */
  pause?: () => Promise<void>;
  chunksPerCell?: number;
  seed?: number;
};

export type BuildReport = { libraryId: number; chunks: number; cells: number; trainedOn: number };

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Builds a cell index of the end user's library and, once every chunk is filed, makes it
 * the one searches use and drops the older ones. Trains on a random sample, then files the
 * library in batches; chunks embedded meanwhile are filed by storeVectors (the index row
 * exists from the moment the library's rowids are read, in one transaction), deleted ones
 * leave by trigger. Returns null when the library has too few vectors for its cells, or
 * when the index was dropped under it (a new embedding model rebuilt the vector table).
 */
export async function buildCellIndex(db: Database, owner: LibraryOwner, now: Date, o: BuildOptions = {}): Promise<BuildReport | null> {
  const pause = o.pause ?? yieldToEventLoop;
  // Only one build per library runs at a time (the job's dedupe key): a row still building is a stopped one's.
  const stopped = db
    .query<{ id: number }, [string, string, string]>(
      "SELECT id FROM vector_libraries WHERE project_id = ? AND mode = ? AND end_user_id = ? AND state = 'building'",
    )
    .all(owner.projectId, owner.mode, owner.endUserId);
  for (const { id } of stopped) await dropCellIndex(db, id, pause);
  let seed = o.seed ?? 0x9e3779b9;
  const rand = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 0x100000000;
  };
  const all = libraryRowids(db, owner);
  const shape = quantizerShape(all.length, o.chunksPerCell ?? CHUNKS_PER_CELL);
  const cells = shape.cells;
  const picked = new Set<number>();
  const wanted = Math.min(all.length, cells * SAMPLE_PER_CELL);
  while (picked.size < wanted) picked.add(all[Math.floor(rand() * all.length)]!);
  const sampled: Float32Array[] = [];
  for (let i = 0, ids = [...picked]; i < ids.length; i += BUILD_BATCH)
    sampled.push(...storedVectors(db, ids.slice(i, i + BUILD_BATCH)).map((v) => floats(v.embedding)));
  if (sampled.length < cells) return null;
  const dimension = sampled[0]!.length;
  const sample = new Float32Array(sampled.length * dimension);
  sampled.forEach((v, i) => sample.set(v, i * dimension));
  const quantizer = await trainQuantizer(sample, dimension, shape, rand, pause);

  const { libraryId, rowids } = db.transaction(() => {
    const id = db
      .query<{ id: number }, SQLQueryBindings[]>(
        `INSERT INTO vector_libraries (project_id, mode, end_user_id, state, dimension, coarse_count, fine_counts, coarse, fine, chunk_count, created_at)
         VALUES (?, ?, ?, 'building', ?, ?, ?, ?, ?, 0, ?) RETURNING id`,
      )
      .get(
        owner.projectId,
        owner.mode,
        owner.endUserId,
        dimension,
        coarseCount(quantizer),
        blob(fineCounts(quantizer)),
        blob(quantizer.coarse),
        blob(quantizer.fine),
        now.toISOString(),
      )!.id;
    return { libraryId: id, rowids: libraryRowids(db, owner) };
  })();
  const file = db.query("INSERT OR REPLACE INTO chunk_cells (library_id, cell, chunk_rowid, recording_id, recorded_at, vector) VALUES (?, ?, ?, ?, ?, ?)");
  const exists = db.query<{ id: number }, [number]>("SELECT id FROM vector_libraries WHERE id = ?");
  // What each cell holds as filed here (chunks stored meanwhile are left out): what a search budgets its probes by.
  const sizes = new Uint32Array(cellCount(quantizer));
  for (let i = 0; i < rowids.length; i += BUILD_BATCH) {
    await pause();
    // Reading and filing in one transaction: a chunk re-embedded meanwhile is filed by its new vector, once.
    const alive = db.transaction(() => {
      if (!exists.get(libraryId)) return false;
      for (const v of storedVectors(db, rowids.slice(i, i + BUILD_BATCH))) {
        const vector = floats(v.embedding);
        if (vector.length !== dimension) continue;
        const cell = cellOf(quantizer, vector);
        file.run(libraryId, cell, v.chunk_rowid, v.recording_id, v.recorded_at, int8Of(vector));
        sizes[cell]!++;
      }
      return true;
    })();
    if (!alive) return null;
  }
  const older = db.transaction(() => {
    if (!exists.get(libraryId)) return null;
    const filed = db.query<{ n: number }, [number]>("SELECT COUNT(*) AS n FROM chunk_cells WHERE library_id = ?").get(libraryId)!.n;
    db.query("UPDATE vector_libraries SET state = 'ready', chunk_count = ?, cell_sizes = ? WHERE id = ?").run(filed, blob(sizes), libraryId);
    return db
      .query<{ id: number }, [string, string, string, number]>(
        "SELECT id FROM vector_libraries WHERE project_id = ? AND mode = ? AND end_user_id = ? AND id <> ?",
      )
      .all(owner.projectId, owner.mode, owner.endUserId, libraryId);
  })();
  if (older === null) return null;
  for (const { id } of older) await dropCellIndex(db, id, pause);
  return { libraryId, chunks: rowids.length, cells: cellCount(quantizer), trainedOn: sampled.length };
}

/** Drops an index a cell at a time (short write locks), then its row. */
export async function dropCellIndex(db: Database, libraryId: number, pause: () => Promise<void> = yieldToEventLoop): Promise<void> {
  const cells = db.query<{ n: number }, [number]>("SELECT length(fine) / (4 * dimension) AS n FROM vector_libraries WHERE id = ?").get(libraryId)?.n ?? 0;
  const dropCell = db.query("DELETE FROM chunk_cells WHERE library_id = ? AND cell = ?");
  for (let cell = 0; cell < cells; cell++) {
    if (cell % 64 === 0) await pause();
    dropCell.run(libraryId, cell);
  }
  db.query("DELETE FROM vector_libraries WHERE id = ?").run(libraryId);
  forgetCellCodes(db, libraryId);
}

/** What the periodic check should do with one end user's library. */
export type CellIndexWork = (LibraryOwner & { action: "build" }) | { action: "drop"; libraryId: number };

/**
 * Libraries large enough for a cell index whose index is missing, stale (chunk count a
 * quarter away from the index's) or unfinished (a build stopped by a restart; building it
 * again drops that one first), and ready indexes whose library fell below half the
 * threshold (erasures, retention): those are dropped.
 */
export function cellIndexWork(db: Database, minChunks = CELL_INDEX_MIN_CHUNKS): CellIndexWork[] {
  const sizes = db
    .query<{ project_id: string; mode: Tenant["mode"]; end_user_id: string; n: number }, []>(
      "SELECT project_id, mode, end_user_id, COUNT(*) AS n FROM chunks WHERE end_user_id IS NOT NULL GROUP BY project_id, mode, end_user_id",
    )
    .all();
  const key = (x: { project_id: string; mode: string; end_user_id: string }) => `${x.project_id}|${x.mode}|${x.end_user_id}`;
  const size = new Map(sizes.map((s) => [key(s), s.n]));
  const indexes = db
    .query<{ id: number; project_id: string; mode: string; end_user_id: string; state: string; chunk_count: number }, []>(
      "SELECT id, project_id, mode, end_user_id, state, chunk_count FROM vector_libraries ORDER BY id",
    )
    .all();
  const work: CellIndexWork[] = [];
  const ready = new Map<string, number>();
  const unfinished = new Set<string>();
  for (const x of indexes) {
    if (x.state !== "ready") unfinished.add(key(x));
    else if ((size.get(key(x)) ?? 0) < minChunks / 2) work.push({ action: "drop", libraryId: x.id });
    else ready.set(key(x), x.chunk_count);
  }
  for (const s of sizes) {
    if (s.n < minChunks) continue;
    const indexed = ready.get(key(s));
    if (indexed === undefined || unfinished.has(key(s)) || Math.abs(s.n - indexed) > REBUILD_DRIFT * indexed)
      work.push({ action: "build", projectId: s.project_id, mode: s.mode, endUserId: s.end_user_id });
  }
  return work;
}

/** A new embedding model empties the vector table; every cell index goes with it (in the caller's transaction). */
export function dropAllCellIndexes(db: Database): void {
  db.exec("DELETE FROM chunk_cells");
  db.exec("DELETE FROM vector_libraries");
  forgetCellCodes(db);
}
