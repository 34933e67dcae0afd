// bench/search.ts: latency of the hybrid search (vector KNN + BM25 + RRF, the code behind
// POST /v1/recordings/search) and of each side alone, beside a brute-force scan of the same
// end user's vectors in JavaScript, measured in the same run. The vector side is timed both
// ways (exact float scan, the baseline; bit scan with exact rescoring, decisions 066 and 099)
// with the recall@8 and @16 of the second against the first; the hybrid line repeats the
// recall@8 of the scan it used beside its p95. Vectors are synthetic with topical structure
// (test/modules/search-embeddings.ts): on uniform random ones no recall figure means anything.
// Tiers: 10k and 100k chunks for one end user; 1M chunks over 1,000 end users (bounded
// by a build-time budget: if the build runs out of time, the tier reports the size reached);
// 1M chunks for ONE end user, a year of an all-day wearer (issue 27), searched through its
// cell index (decisions 192, 204), whose build time and memory it prints. That tier's chunks are
// generated once and cached in the temporary folder (BENCH_CACHE), as generating them
// takes many minutes; its cell index is built afresh on every run (BENCH_KEEP_CELLS=1 keeps
// the cached one, to measure searches alone).
// Targets: p95 <= 30 ms at 10k; p95 <= 15 ms with recall@8 >= 0.95 at 100k for one end
// user (issue 18); p95 <= 60 ms at 1M over 1,000 end users; p95 <= 25 ms with recall@8 >=
// 0.95 at 1M for one end user.
// Usage: bun bench/search.ts [queries per tier, default 50] [build budget seconds for the 1M tier, default 600]
//          [--tier 100k | 1m-many | 1m-one | all] (default: all but 1m-one; 100k runs 10k first)
// BENCH_MMAP=<bytes> overrides PRAGMA mmap_size on the bench database (0 shows the cost without the map).
// BENCH_KEEP_CELLS=1 reuses the 1m-one tier's cached cell index instead of building it again.
// BENCH_CODES=0 leaves the cell index's codes out of memory: its cells are ranked in SQL (as before decision 216).
// BENCH_FIRST_LINE=1 stops each tier after its first hybrid line (the fresh process's), without recall.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Database } from "bun:sqlite";
import { MMAP_BYTES, openDatabase } from "../src/db/open";
import { migrate } from "../src/db/migrate";
import type { Embedder } from "../src/engines/embedder";
import { createLogger } from "../src/log";
import { type ChunkFilter, DocumentCounts, keywordCandidates, libraryChunkCount, ownerToken } from "../src/modules/search/store";
import { queryWords, retrieveChunks } from "../src/modules/search/service";
import { heldCellCodes } from "../src/modules/search/cell-codes";
import { buildCellIndex, CELL_INDEX_MIN_CHUNKS, PROBED_CELLS, readyCellLibrary, warmCellCodes } from "../src/modules/search/vector-cells";
import { rescoredCandidates, type VectorScan, vectorCandidates, vectorScanFor } from "../src/modules/search/vector-index";
import { recall, topicalEmbeddings } from "../test/modules/search-embeddings";

const tierAt = process.argv.indexOf("--tier");
const TIER = tierAt >= 0 ? process.argv[tierAt + 1]! : "default";
const positional = process.argv.slice(2).filter((_, i, all) => all[i] !== "--tier" && all[i - 1] !== "--tier");
const QUERIES = Number(positional[0] ?? 50);
const BUDGET_S = Number(positional[1] ?? 600);
if (!["default", "100k", "1m-many", "1m-one", "all"].includes(TIER)) throw new Error(`unknown tier ${TIER}: 100k, 1m-many, 1m-one or all`);
const runs = (tier: string) => TIER === tier || TIER === "all" || (TIER === "default" && tier !== "1m-one");
const DIM = 384;
/** BENCH_FIRST_LINE=1: only a tier's first hybrid line (a fresh process's), to repeat it over many processes cheaply. */
const FIRST_LINE_ONLY = process.env.BENCH_FIRST_LINE === "1";
const LIMIT = 8;
const MIN_RECALL = 0.95;

let seed = 42;
const rand = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 0xffffffff;
};
// 100 topics of 20 subtopics: at 100k chunks a query's subtopic holds ~50 chunks.
const embedding = topicalEmbeddings({ seed: 42, dimension: DIM, topics: 100 });
const SYLLABLES = ["ka", "lo", "mi", "ne", "ra", "to", "vu", "se", "di", "po", "an", "el", "or", "us", "ip"];
const VOCAB = Array.from({ length: 3000 }, (_, i) => SYLLABLES[i % 15]! + SYLLABLES[Math.floor(i / 15) % 15]! + SYLLABLES[Math.floor(i / 225) % 15]!);
// Zipf-like word choice: a few words are common, most are rare, as in speech.
const word = () => VOCAB[Math.floor(VOCAB.length * rand() ** 3)]!;
const sentence = (n: number) => Array.from({ length: n }, word).join(" ");

/** An embedder that returns a fresh synthetic vector: the model's cost is not what this bench measures. */
const queryEmbedder: Embedder = { model: "bench-synthetic", dimension: async () => DIM, embed: async (texts) => texts.map(() => embedding()) };
const TENANT = { projectId: "prj_bench", mode: "test" as const };

/**
 * A connection as the server opens it. The bench loads chunks with SQL, past the store, so
 * the store's per-connection word and library counts are not told: a tier that grows a
 * library measures on a fresh connection.
 */
function connect(dir: string): Database {
  const db = openDatabase(join(dir, "parley.db"));
  // Chunks reference recordings and transcriptions; the bench loads chunks alone.
  db.exec("PRAGMA foreign_keys = OFF");
  if (process.env.BENCH_MMAP !== undefined) db.exec(`PRAGMA mmap_size = ${Number(process.env.BENCH_MMAP)}`);
  return db;
}

function openBenchDb(): { db: Database; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "parley-bench-search-"));
  const db = connect(dir);
  migrate(db);
  db.query("UPDATE search_index SET model = ?, dimension = ?").run(queryEmbedder.model, DIM);
  return { db, dir };
}

let nextRow = 1;
/** Inserts `count` chunks for an end user in one transaction; keeps the vectors when asked (for the brute-force scan). */
function load(db: Database, endUserId: string, count: number, keep?: Float32Array[]): void {
  const chunk = db.query(
    `INSERT INTO chunks (rowid, id, project_id, mode, end_user_id, recording_id, transcription_id, seq, start_ms, end_ms, speaker, recorded_at, text, owner_token, embedded_generation, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, 1, ?)`,
  );
  const vector = db.query(
    "INSERT INTO chunk_vectors (chunk_rowid, project_id, mode, end_user_id, recording_id, recorded_at, embedding, embedding_bits) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, vec_quantize_binary(?7))",
  );
  const token = ownerToken(TENANT, endUserId);
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const row = nextRow++;
      const recording = `rec_${endUserId}_${Math.floor(i / 40)}`;
      const recordedAt = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 40) * 3_600_000).toISOString();
      chunk.run(
        row,
        `chk_${row}`,
        TENANT.projectId,
        TENANT.mode,
        endUserId,
        recording,
        `txn_${recording}`,
        i % 40,
        (i % 40) * 45_000,
        (i % 40) * 45_000 + 45_000,
        recordedAt,
        sentence(60),
        token,
        "2026-01-01T00:00:00.000Z",
      );
      const v = embedding();
      vector.run(row, TENANT.projectId, TENANT.mode, endUserId, recording, recordedAt, v);
      keep?.push(v);
    }
  })();
}

/** The baseline: an exact scan of one contiguous Float32Array (the fastest plain-JS layout). */
function bruteForce(flat: Float32Array, q: Float32Array, k: number): number[] {
  const count = flat.length / DIM;
  const best: [number, number][] = [];
  for (let i = 0; i < count; i++) {
    let dot = 0;
    for (let d = 0, o = i * DIM; d < DIM; d++) dot += flat[o + d]! * q[d]!;
    if (best.length < k || dot > best[best.length - 1]![1]) {
      best.push([i, dot]);
      best.sort((a, b) => b[1] - a[1]);
      if (best.length > k) best.pop();
    }
  }
  return best.map(([i]) => i);
}

type Percentiles = { p50: number; p95: number };
/** Wall-clock percentiles, and the same of the process's CPU time per call. */
type Timing = Percentiles & { cpu: Percentiles };

function percentiles(ms: number[]): Percentiles {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length * 0.5)]!, p95: s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)]! };
}

/**
 * Times `fn` by the wall clock, and by the CPU time the process spent in it: a query is
 * one thread's work on memory-mapped pages, so its CPU time is close to what an idle box's
 * wall clock would show, whatever else the shared machine runs.
 */
async function time(fn: () => unknown | Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < 5; i++) await fn(); // warm caches and JIT
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const [t0, c0] = [performance.now(), process.cpuUsage()];
    await fn();
    const c = process.cpuUsage(c0);
    ms.push(performance.now() - t0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { ...percentiles(ms), cpu: percentiles(cpu) };
}

// Fresh document counts per measurement: the library grew since the last one.
const deps = (db: Database) => ({ db, searchCounts: new DocumentCounts(db), log: createLogger("silent"), engines: { embedder: queryEmbedder } as never });
const ms = (x: number) => `${x.toFixed(1).padStart(6)} ms`;
const fmt = (t: Timing) => `p50 ${ms(t.p50)}   p95 ${ms(t.p95)}   (cpu p50 ${ms(t.cpu.p50)}   p95 ${ms(t.cpu.p95)})`;

/** Mean share of `exact` (one top-k per query) found by `scan` on the same queries. */
const meanRecall = (queries: Float32Array[], exact: number[][], scan: (q: Float32Array) => number[]) =>
  queries.reduce((sum, q, i) => sum + recall(scan(q), exact[i]!), 0) / queries.length;

/**
 * The quantized scan's trade-off at other budgets, on one query set: candidates rescored,
 * and whether the scan starts within a learned distance bound (decision 099) or scans the
 * whole library for its candidates (a library's first scan; decision 066's scan is 64 so).
 */
async function tradeOffs(db: Database, filter: ChunkFilter, queries: Float32Array[], exact: number[][]) {
  console.log(`  quantized scan trade-offs (vector side alone, ${queries.length} queries, recall@${LIMIT} vs exact):`);
  for (const candidates of [64, 96, 128]) {
    for (const bounded of [false, true]) {
      const learned = deps(db);
      // Unbounded: a fresh cache each scan, so none starts from a learned bound.
      const store = () => (bounded ? learned : deps(db));
      const scan = (q: Float32Array) => vectorCandidates(store(), filter, q, LIMIT, "quantized", { candidates });
      let i = 0;
      const timing = await time(() => scan(queries[i++ % queries.length]!));
      const shown = `${candidates} candidates, ${bounded ? "learned bound" : "no bound   "}`;
      console.log(
        `    ${shown.padEnd(32)} ${fmt(timing)}   recall@${LIMIT} ${meanRecall(queries, exact, scan).toFixed(3)}${candidates === rescoredCandidates(LIMIT * 2) && bounded ? "   <- the server's" : ""}`,
      );
    }
  }
}

/** The cell index's trade-off: chunks probed, in mean cells (decisions 192, 204). */
async function cellTradeOffs(db: Database, filter: ChunkFilter, queries: Float32Array[], exact: number[][]) {
  console.log(`  cell index trade-offs (vector side alone, ${queries.length} queries, recall@${LIMIT} vs exact):`);
  const store = deps(db);
  for (const probes of [2, 3, 4, 6, 8, 12]) {
    const scan = (q: Float32Array) => vectorCandidates(store, filter, q, LIMIT, "cells", { probes });
    let i = 0;
    const timing = await time(() => scan(queries[i++ % queries.length]!));
    const shown = `probed to ${probes} mean cells`;
    console.log(
      `    ${shown.padEnd(32)} ${fmt(timing)}   recall@${LIMIT} ${meanRecall(queries, exact, scan).toFixed(3)}${probes === PROBED_CELLS ? "   <- the server's" : ""}`,
    );
  }
}

/**
 * Loads the cell index's codes into memory as a server does when it starts (decision 216),
 * printing the time, CPU and memory it took: the first hybrid line after it is what a user
 * sees once a restarted server has loaded them; until then searches rank the cells in SQL.
 */
async function loadCodes(db: Database, filter: ChunkFilter) {
  const before = process.memoryUsage().rss;
  const [t0, c0] = [performance.now(), process.cpuUsage()];
  const held = await warmCellCodes(db, filter);
  const cpu = process.cpuUsage(c0);
  const rows = [...heldCellCodes(db).values()].reduce((a, b) => a + b, 0);
  console.log(
    `\ncell codes ${held ? `of ${rows.toLocaleString()} chunks loaded into memory` : "NOT loaded"} in ${((performance.now() - t0) / 1000).toFixed(1)} s (CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s), ` +
      `resident +${((process.memoryUsage().rss - before) / 2 ** 20).toFixed(0)} MB, as a server does at its start; the first hybrid line follows, its word counts fresh and the keyword pages not yet mapped`,
  );
}

/** Measures one library; `vectors` (kept in JavaScript) are for the brute-force line, left out at 1M for one end user. */
async function measure(label: string, db: Database, endUserId: string, vectors: Float32Array[] | null, target: { p95: number; recall?: number }) {
  const filter: ChunkFilter = { ...TENANT, endUserId };
  const search = deps(db);
  const scan = vectorScanFor(search, filter);
  if (scan === "cells" && process.env.BENCH_CODES !== "0") await loadCodes(db, filter);
  const hybrid = await time(() => retrieveChunks(search, filter, sentence(6), LIMIT));
  if (FIRST_LINE_ONLY) {
    console.log(`\n${label} (load ${loadavg()[0]!.toFixed(1)})\n  hybrid search (KNN + BM25 + RRF)   ${fmt(hybrid)}   (first line only: recall not measured)`);
    return;
  }
  const exact = await time(() => vectorCandidates(search, filter, embedding(), LIMIT * 2, "exact"));
  const quantized = await time(() => vectorCandidates(search, filter, embedding(), LIMIT * 2, "quantized"));
  const queries = Array.from({ length: QUERIES }, embedding);
  const exactTop = (k: number) => queries.map((q) => vectorCandidates(search, filter, q, k, "exact"));
  const [exact8, exact16] = [exactTop(LIMIT), exactTop(LIMIT * 2)];
  const recallOf = (how: VectorScan, k: number, truth: number[][]) => meanRecall(queries, truth, (q) => vectorCandidates(search, filter, q, k, how));
  const recall8 = recallOf("quantized", LIMIT, exact8);
  const recall16 = recallOf("quantized", LIMIT * 2, exact16);
  const keywords = await time(() => keywordCandidates(search, filter, queryWords(sentence(6)), LIMIT * 4));
  const hybridRecall = scan === "exact" ? 1 : recallOf(scan, LIMIT, exact8);
  const recallMet = hybridRecall >= (target.recall ?? 0);
  const verdict = (p95: number) => (p95 <= target.p95 && recallMet ? "met" : "MISSED");
  const goal = `p95 <= ${target.p95} ms${target.recall ? ` with recall@${LIMIT} >= ${target.recall}` : ""}`;
  console.log(`\n${label} (load ${loadavg()[0]!.toFixed(1)})`);
  console.log(`  hybrid search (KNN + BM25 + RRF)   ${fmt(hybrid)}   recall@${LIMIT} ${hybridRecall.toFixed(3)} (vector scan: ${scan})`);
  console.log(`    target ${goal}: ${verdict(hybrid.p95)} by the wall clock, ${verdict(hybrid.cpu.p95)} by CPU time (an idle box)`);
  console.log(`  vector KNN alone, exact floats     ${fmt(exact)}   (the baseline recall is measured against)`);
  console.log(
    `  vector KNN alone, bits + rescore   ${fmt(quantized)}   recall@${LIMIT} ${recall8.toFixed(3)}, recall@${LIMIT * 2} ${recall16.toFixed(3)} vs exact (${rescoredCandidates(LIMIT * 2)} candidates rescored, whole library)`,
  );
  if (scan === "cells") {
    const cells = await time(() => vectorCandidates(search, filter, embedding(), LIMIT * 2, "cells"));
    console.log(
      `  vector KNN alone, cell index       ${fmt(cells)}   recall@${LIMIT} ${hybridRecall.toFixed(3)}, recall@${LIMIT * 2} ${recallOf("cells", LIMIT * 2, exact16).toFixed(3)} vs exact (probed to ${PROBED_CELLS} mean cells of chunks)`,
    );
  }
  console.log(`  keyword BM25 alone (FTS5)          ${fmt(keywords)}`);
  if (scan === "cells") {
    // A filter every chunk passes: the cells' rows are then ranked in SQL, as for any date or recording
    // filter, and as for every search while the codes are not held (the first seconds after a start, a reload).
    const viaSql = { ...filter, recordedAfter: "2000-01-01T00:00:00.000Z" };
    const sql = await time(() => vectorCandidates(search, viaSql, embedding(), LIMIT * 2, "cells"));
    console.log(`  vector KNN alone, cells in SQL     ${fmt(sql)}   (codes not held: while they load, or with a date filter)`);
    const sqlHybrid = await time(() => retrieveChunks(search, viaSql, sentence(6), LIMIT));
    console.log(`  hybrid, cells in SQL               ${fmt(sqlHybrid)}`);
    // The hybrid line above ran first in a fresh process: on fresh word counts (each query's new words walked, ~0.7 ms
    // each, decision 217) and on database pages not yet mapped into it (page faults: under 1 ms a query, decision 216).
    // A server keeps its counts 10 minutes: the same search again, on fresh counts once the pages are mapped, then warm.
    const fresh = deps(db);
    const mapped = await time(() => retrieveChunks(fresh, filter, sentence(6), LIMIT));
    console.log(`  hybrid again, fresh word counts    ${fmt(mapped)}`);
    const warm = await time(() => retrieveChunks(fresh, filter, sentence(6), LIMIT));
    console.log(`  hybrid again, word counts warm     ${fmt(warm)}`);
  }
  if (vectors) {
    const flat = new Float32Array(vectors.length * DIM);
    vectors.forEach((v, i) => flat.set(v, i * DIM));
    const brute = await time(() => bruteForce(flat, embedding(), LIMIT * 2));
    console.log(
      `  brute-force scan in JS (baseline)  ${fmt(brute)}   over ${vectors.length.toLocaleString()} vectors; hybrid p95 is ${(brute.p95 / hybrid.p95).toFixed(1)}x faster`,
    );
  }
  if (scan === "cells") await cellTradeOffs(db, filter, queries, exact8);
  else if (target.recall) await tradeOffs(db, filter, queries, exact8);
}

console.log(`bench/search.ts: ${QUERIES} queries per measurement, ${DIM}-dim vectors, limit ${LIMIT}, 60-word chunks`);
// Latency on a shared machine depends on what else runs: print the load beside the figures.
console.log(
  `machine: ${cpus().length} cores, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" / ")} at start; mmap_size ${process.env.BENCH_MMAP ?? `${MMAP_BYTES} (as the server)`}`,
);

if (runs("100k")) {
  const opened = openBenchDb();
  const dir = opened.dir;
  let db = opened.db;
  const vectors: Float32Array[] = [];
  let t0 = performance.now();
  load(db, "eu_one", 10_000, vectors);
  console.log(`\nbuilt 10k chunks in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await measure("10k chunks, one end user", db, "eu_one", vectors, { p95: 30 });
  t0 = performance.now();
  load(db, "eu_one", 90_000, vectors);
  console.log(`\nbuilt 100k chunks in ${((performance.now() - t0) / 1000).toFixed(1)} s (+90k)`);
  db.close();
  db = connect(dir);
  await measure("100k chunks, one end user", db, "eu_one", vectors, { p95: 15, recall: MIN_RECALL });
  db.close();
  rmSync(dir, { recursive: true, force: true });
}

if (runs("1m-many")) {
  const { db, dir } = openBenchDb();
  const users = 1000;
  const perUser = 1000;
  const measured: Float32Array[] = [];
  const t0 = performance.now();
  let built = 0;
  for (let u = 0; u < users; u++) {
    load(db, `eu_${u}`, perUser, u === 0 ? measured : undefined);
    built += perUser;
    if ((performance.now() - t0) / 1000 > BUDGET_S) break;
    if (built % 100_000 === 0) console.log(`  ... ${built.toLocaleString()} chunks in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  const complete = built === users * perUser;
  console.log(
    `\nbuilt ${built.toLocaleString()} chunks over ${built / perUser} end users in ${((performance.now() - t0) / 1000).toFixed(1)} s${complete ? "" : ` (build budget of ${BUDGET_S} s reached: the 1M tier is PARTIAL)`}`,
  );
  await measure(`${(built / 1_000_000).toFixed(2)}M chunks over ${built / perUser} end users (one end user's search)`, db, "eu_0", measured, { p95: 60 });
  db.close();
  rmSync(dir, { recursive: true, force: true });
}

/** Builds the 1M library's cell index as the server's build job does, printing its time and memory. */
async function measureBuild(db: Database) {
  db.exec("DELETE FROM chunk_cells");
  db.exec("DELETE FROM vector_libraries");
  // Resident memory counts the database pages the build reads through the memory map
  // (shared with the page cache, given back under pressure); the heap is the build's own.
  const before = process.memoryUsage();
  const peak = { rss: before.rss, heap: before.heapUsed };
  const [t0, c0] = [performance.now(), process.cpuUsage()];
  const built = await buildCellIndex(db, { ...TENANT, endUserId: "eu_year" }, new Date(), {
    pause: async () => {
      const now = process.memoryUsage();
      peak.rss = Math.max(peak.rss, now.rss);
      peak.heap = Math.max(peak.heap, now.heapUsed);
    },
  });
  const cpu = process.cpuUsage(c0);
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  console.log(
    `\ncell index of 1M chunks: ${built?.cells} cells trained on ${built?.trainedOn.toLocaleString()} sampled vectors, built in ${((performance.now() - t0) / 1000).toFixed(1)} s ` +
      `(CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s; load ${loadavg()[0]!.toFixed(1)}); memory at its peak: JavaScript heap ${mb(peak.heap)} (+${mb(peak.heap - before.heapUsed)}), ` +
      `resident ${mb(peak.rss)} (+${mb(peak.rss - before.rss)}, mostly the database's mapped pages); threshold ${CELL_INDEX_MIN_CHUNKS.toLocaleString()} chunks`,
  );
}

if (runs("1m-one")) {
  const ONE_USER = 1_000_000;
  // The generated library is kept between runs: generating a million chunks with their
  // keyword and vector indexes takes many minutes on a small box. The name carries the
  // generator's shape, so a change to it means a new cache.
  const dir = join(process.env.BENCH_CACHE ?? tmpdir(), `parley-bench-search-1m-one-v1-${DIM}`);
  const count = (db: Database) => db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM chunks").get()!.n;
  let db: Database;
  if (existsSync(join(dir, "parley.db")) && count((db = connect(dir))) === ONE_USER) {
    console.log(`\n1M chunks for one end user: the generated library cached in ${dir}`);
    migrate(db); // a cache made before a new migration
  } else {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    db = connect(dir);
    migrate(db);
    db.query("UPDATE search_index SET model = ?, dimension = ?").run(queryEmbedder.model, DIM);
    const t0 = performance.now();
    for (let built = 0; built < ONE_USER; built += 50_000) {
      load(db, "eu_year", 50_000);
      console.log(`  ... ${(built + 50_000).toLocaleString()} chunks in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }
    console.log(`\ngenerated 1M chunks for one end user in ${((performance.now() - t0) / 1000).toFixed(1)} s (cached in ${dir})`);
  }
  // The cell index, as the server's build job makes it, from scratch on every run, unless
  // BENCH_KEEP_CELLS=1 and the cache holds a ready one (the build takes ~10 minutes here).
  const kept = process.env.BENCH_KEEP_CELLS === "1" && readyCellLibrary(db, { ...TENANT, endUserId: "eu_year" });
  if (kept) console.log(`\ncell index of 1M chunks: kept from an earlier run (BENCH_KEEP_CELLS=1), its build not measured`);
  else await measureBuild(db);
  // A probe costs what its cell holds: the spread of cell sizes is the spread of the vector side's latency (decision 204).
  const sizes = db
    .query<{ n: number }, []>("SELECT COUNT(*) AS n FROM chunk_cells GROUP BY cell ORDER BY n")
    .all()
    .map((r) => r.n);
  const at = (p: number) => sizes[Math.min(sizes.length - 1, Math.floor(p * sizes.length))]!.toLocaleString();
  console.log(`  chunks a cell: min ${at(0)}, p50 ${at(0.5)}, p95 ${at(0.95)}, max ${at(1)}`);
  db.close();
  db = connect(dir);
  await measure("1M chunks, one end user (a year of an all-day wearer)", db, "eu_year", null, { p95: 25, recall: MIN_RECALL });
  db.close();
}
