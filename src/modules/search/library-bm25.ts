import type { Database } from "bun:sqlite";

/** FTS5's own bm25() constants. */
const K1 = 1.2;
const B = 0.75;
/** FTS5 floors a word's idf here, so a word in half the library or more weighs next to nothing. */
const FLOOR = 1e-6;

/** A word as an FTS5 string: never read as query syntax. */
export const quoted = (word: string) => `"${word.replaceAll('"', '""')}"`;

/**
 * A chunk's length as bm25() counts it: the tokens of every column (the owner token's one
 * and the text's), summed from its %_docsize row, one SQLite varint per column.
 */
function tokenCount(sz: Uint8Array): number {
  let total = 0;
  let value = 0;
  for (const byte of sz) {
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) {
      total += value;
      value = 0;
    }
  }
  return total;
}

type Hit = { rowid: number; sz: Uint8Array; marked: string };

/**
 * BM25 over one end user's library, computed here rather than by FTS5's bm25(): to weigh a
 * word, bm25() counts the chunks holding it by walking the word's whole posting list, every
 * tenant's, on every query (16 ms against 0.4 ms for the same match unranked at 400k chunks,
 * decision 064). Here the owner token's own postings are the corpus: the document count,
 * average length, term frequencies (from highlight(), which marks each match) and lengths
 * (from %_docsize) are the end user's. The formula is FTS5's: k1 1.2, b 0.75, idf floored
 * near zero for words in half the library or more. Meant for libraries within the postings
 * budget; the term frequencies read are bounded by it too.
 */
export function rankLibrary(db: Database, owner: string, words: string[], budget: number): Map<number, number> {
  const scores = new Map<number, number>();
  const lengths = db
    .query<{ sz: Uint8Array }, [string]>("SELECT d.sz FROM chunks_fts JOIN chunks_fts_docsize d ON d.id = chunks_fts.rowid WHERE chunks_fts MATCH ?")
    .all(`owner_token : "${owner}"`);
  const total = lengths.length;
  if (total === 0) return scores;
  const avgdl = lengths.reduce((sum, r) => sum + tokenCount(r.sz), 0) / total || 1;
  const matched = words.map((word) => {
    const match = `owner_token : "${owner}" AND text : ${quoted(word)}`;
    const rowids = db.query<{ rowid: number }, [string]>("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?").all(match);
    return { match, rowids, idf: Math.log((total - rowids.length + 0.5) / (rowids.length + 0.5)) };
  });
  // Rarest first, reading term frequencies while the matches read fit the budget (a long
  // query of middling words stays bounded); the rarest word is always weighed in full.
  matched.sort((a, b) => a.rowids.length - b.rowids.length);
  let read = 0;
  for (const { match, rowids, idf } of matched) {
    if (idf <= FLOOR || (read > 0 && read + rowids.length > budget)) {
      // A word in half the library or more (FTS5's floor), or past the budget: its chunks are candidates only.
      for (const { rowid } of rowids) scores.set(rowid, (scores.get(rowid) ?? 0) + FLOOR);
      continue;
    }
    read += rowids.length;
    const hits = db
      .query<Hit, [string]>(
        `SELECT chunks_fts.rowid AS rowid, d.sz AS sz, highlight(chunks_fts, 1, char(1), '') AS marked
         FROM chunks_fts JOIN chunks_fts_docsize d ON d.id = chunks_fts.rowid WHERE chunks_fts MATCH ?`,
      )
      .all(match);
    for (const hit of hits) {
      const tf = hit.marked.split("\u0001").length - 1;
      const norm = K1 * (1 - B + (B * tokenCount(hit.sz)) / avgdl);
      scores.set(hit.rowid, (scores.get(hit.rowid) ?? 0) + (idf * tf * (K1 + 1)) / (tf + norm));
    }
  }
  return scores;
}
