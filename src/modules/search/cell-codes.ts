import type { Database } from "bun:sqlite";

/**
 * A ready cell index's int8 codes held in memory (decision 216). The codes of a large
 * library lie past SQLite's 2 GB memory map (they are written last), so a probe read ~480
 * pages through SQLite's 32 MB page cache and ranked ~4,600 rows in SQL: at 1M chunks ~6 ms
 * of CPU, a third of a search. Ranked here from one contiguous array (cells one after the
 * other), the same rows cost ~2 ms. The copy is used only while the index's version
 * (migration 0042: moved by trigger on every insert into or delete from chunk_cells) is the
 * one it was loaded at; a changed index is read through SQL until a reload catches up.
 */

/** Memory all of a connection's held codes may take: a 1M-chunk library takes ~396 MB (384 bytes, a rowid and a length a chunk). */
export const CELL_CODES_MAX_BYTES = 768 * 2 ** 20;
/** A reload after a change waits this long after the last one began, so a library filed into every few seconds is not reloaded as often. */
const RELOAD_INTERVAL_MS = 60_000;
/** Cells read between two yields while loading: ~8,000 rows at 1M chunks, ~20 ms of the event loop (a load is ~2.7 s of CPU). */
const CELLS_PER_STEP = 8;

type Codes = {
  version: number;
  dimension: number;
  /** Rows of cell c are cellStart[c] to cellStart[c + 1]. */
  cellStart: Uint32Array;
  rowids: Float64Array;
  codes: Int8Array;
  /** Each row's squared length: a distance is then one dot product per row (|v|^2 + |q|^2 - 2 v.q). */
  norms: Int32Array;
  bytes: number;
};

type Held = { codes: Map<number, Codes>; loading: Set<number>; lastLoad: Map<number, number> };
const heldBy = new WeakMap<Database, Held>();

function held(db: Database): Held {
  let h = heldBy.get(db);
  if (!h) heldBy.set(db, (h = { codes: new Map(), loading: new Set(), lastLoad: new Map() }));
  return h;
}

/** The index's version: moved by every row filed into or dropped from it. */
function versionOf(db: Database, libraryId: number): number | null {
  return db.query<{ version: number }, [number]>("SELECT version FROM cell_index_versions WHERE library_id = ?").get(libraryId)?.version ?? null;
}

const bytesHeld = (h: Held) => [...h.codes.values()].reduce((sum, c) => sum + c.bytes, 0);

export type CodeLibrary = { id: number; dimension: number; cells: number; cellSizes: Uint32Array };

/**
 * Loads the index's codes into memory, a few cells at a time with `pause` between them
 * (the server's event loop runs meanwhile), unless they are held at its version already,
 * would take more than what CELL_CODES_MAX_BYTES leaves, or the index changed while they
 * were read (then the copy is dropped: the next reload tries again). Returns whether the
 * codes are held at the index's current version.
 */
export async function loadCellCodes(db: Database, library: CodeLibrary, pause: () => Promise<void>): Promise<boolean> {
  const h = held(db);
  // Copies of indexes dropped since (a rebuild replaced them) go first: they are never read again, and they would hold the budget.
  for (const id of h.codes.keys()) if (versionOf(db, id) === null) h.codes.delete(id);
  const version = versionOf(db, library.id);
  if (version === null) return false;
  if (h.codes.get(library.id)?.version === version) return true;
  if (h.loading.has(library.id)) return false;
  h.codes.delete(library.id);
  // Sizes as the build filed them, plus room for chunks filed since (a rebuild comes at a quarter more).
  let capacity = Math.ceil(library.cellSizes.reduce((a, b) => a + b, 0) * 1.05) + 1_024;
  if (bytesHeld(h) + capacity * (library.dimension + 12) > CELL_CODES_MAX_BYTES) return false;
  h.loading.add(library.id);
  h.lastLoad.set(library.id, Date.now());
  try {
    let rowids = new Float64Array(capacity);
    let codes = new Int8Array(capacity * library.dimension);
    const cellStart = new Uint32Array(library.cells + 1);
    const read = db.query<{ chunk_rowid: number; vector: Uint8Array }, [number, number]>(
      "SELECT chunk_rowid, vector FROM chunk_cells WHERE library_id = ? AND cell = ? ORDER BY chunk_rowid",
    );
    let n = 0;
    for (let cell = 0; cell < library.cells; cell++) {
      if (cell % CELLS_PER_STEP === 0) {
        await pause();
        if (versionOf(db, library.id) !== version) return false;
      }
      cellStart[cell] = n;
      for (const row of read.iterate(library.id, cell)) {
        if (row.vector.byteLength !== library.dimension) continue;
        if (n === capacity) {
          capacity = Math.ceil(capacity * 1.25);
          if (bytesHeld(h) + capacity * (library.dimension + 12) > CELL_CODES_MAX_BYTES) return false;
          rowids = grow(rowids, new Float64Array(capacity));
          codes = grow(codes, new Int8Array(capacity * library.dimension));
        }
        rowids[n] = row.chunk_rowid;
        codes.set(row.vector, n * library.dimension);
        n++;
      }
    }
    cellStart[library.cells] = n;
    // Read across yields: only a version unchanged from the first read to the last vouches for every row.
    if (versionOf(db, library.id) !== version) return false;
    const norms = new Int32Array(n);
    for (let i = 0, o = 0; i < n; i++) for (let end = o + library.dimension; o < end; o++) norms[i]! += codes[o]! * codes[o]!;
    // Views, not copies: a copy would hold twice the codes for a moment; the room left is at most a twentieth.
    h.codes.set(library.id, {
      version,
      dimension: library.dimension,
      cellStart,
      rowids: rowids.subarray(0, n),
      codes: codes.subarray(0, n * library.dimension),
      norms,
      bytes: rowids.byteLength + codes.byteLength + norms.byteLength,
    });
    // Reading a million rows left a million row objects and blob copies behind (~400 MB): collected now, at
    // once, in the background work, rather than by the collector's threads during the searches that follow.
    Bun.gc(true);
    return true;
  } finally {
    h.loading.delete(library.id);
  }
}

function grow<T extends Float64Array | Int8Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/**
 * The index's codes if held at its current version. A copy that missed a change is dropped
 * at once, and a reload is started in the background (at most one a RELOAD_INTERVAL_MS), so
 * searches read through SQL until it is done.
 */
export function currentCellCodes(db: Database, library: CodeLibrary): Codes | null {
  const h = heldBy.get(db);
  const codes = h?.codes.get(library.id);
  const version = versionOf(db, library.id);
  if (codes && codes.version === version) return codes;
  if (!h || version === null) return null;
  h.codes.delete(library.id);
  if (!h.loading.has(library.id) && Date.now() - (h.lastLoad.get(library.id) ?? 0) >= RELOAD_INTERVAL_MS)
    void loadCellCodes(db, library, yieldToEventLoop).catch(() => {});
  return null;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Drops the held copy of one index (`libraryId`), or of every index: an erasure's or a dropped index's codes leave memory with its rows. */
export function forgetCellCodes(db: Database, libraryId?: number): void {
  if (libraryId === undefined) heldBy.get(db)?.codes.clear();
  else heldBy.get(db)?.codes.delete(libraryId);
}

/** Held copies, for the tests and the bench: library id to rows held. */
export function heldCellCodes(db: Database): Map<number, number> {
  return new Map([...(heldBy.get(db)?.codes ?? new Map<number, Codes>())].map(([id, c]) => [id, c.rowids.length]));
}

/**
 * The `count` rows of `cells` nearest `query` (int8, as filed) by L2 distance, nearest
 * first, ties by rowid: what cellCandidates' SQL returns, with the distance scaled by `scale`.
 */
export function nearestHeld(codes: Codes, cells: number[], query: Int8Array, count: number, scale: number): { chunk_rowid: number; distance: number }[] {
  const d = codes.dimension;
  const q = Int32Array.from(query);
  const qq = q.reduce((sum, x) => sum + x * x, 0);
  const best: { rowid: number; d2: number }[] = [];
  let worst = Number.POSITIVE_INFINITY;
  for (const cell of cells) {
    for (let i = codes.cellStart[cell]!, end = codes.cellStart[cell + 1]!; i < end; i++) {
      const d2 = codes.norms[i]! + qq - 2 * dot(codes.codes, i * d, q, 0, d);
      const rowid = codes.rowids[i]!;
      if (best.length === count && (d2 > worst || (d2 === worst && rowid > best[count - 1]!.rowid))) continue;
      let at = best.length;
      while (at > 0 && (best[at - 1]!.d2 > d2 || (best[at - 1]!.d2 === d2 && best[at - 1]!.rowid > rowid))) at--;
      best.splice(at, 0, { rowid, d2 });
      if (best.length > count) best.pop();
      if (best.length === count) worst = best[count - 1]!.d2;
    }
  }
  return best.map((b) => ({ chunk_rowid: b.rowid, distance: Math.sqrt(b.d2) / scale }));
}

/**
 * The dot product of a row of codes with the query (as int32: one type per call site keeps
 * the JIT's loads monomorphic), `d` a multiple of 4 (every dimension here is of 8), four
 * lanes at a time: measured ~40% less than one lane.
 */
function dot(a: Int8Array, ao: number, b: Int32Array, bo: number, d: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let j = 0; j < d; j += 4) {
    s0 += a[ao + j]! * b[bo + j]!;
    s1 += a[ao + j + 1]! * b[bo + j + 1]!;
    s2 += a[ao + j + 2]! * b[bo + j + 2]!;
    s3 += a[ao + j + 3]! * b[bo + j + 3]!;
  }
  return s0 + s1 + s2 + s3;
}
