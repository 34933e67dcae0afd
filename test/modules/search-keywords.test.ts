import { describe, expect, test } from "bun:test";
import { makeTenant, makeTestApp } from "../helpers";
import { type Line, seedTranscript } from "./search-corpus";

// No embedding model is installed here, so search answers from keywords alone: these
// are what a fresh install sees before `parley models pull`.
async function keywordOnlyApp() {
  const t = await makeTestApp({ env: { PARLEY_EMBEDDING_MODEL: "all-minilm-l6-v2" } });
  const library = async () => {
    const tenant = makeTenant(t.deps);
    const endUser = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body.id as string;
    const add = (lines: Line[]) =>
      seedTranscript(t.deps, { projectId: tenant.project.id, mode: "test" }, { endUserId: endUser, recordedAt: null, lines }).recordingId;
    const search = async (query: string, filters: object = {}) =>
      (await t.call("POST", "/v1/recordings/search", { key: tenant.test, body: { query, end_user_id: endUser, ...filters } })).body.results as any[];
    return { add, search };
  };
  return { t, library };
}

const line = (text: string): Line[] => [[0, 5, "SPEAKER_1", text]];

describe("keyword search without an embedding model", () => {
  test("a one-chunk library finds its own words, even the commonest", async () => {
    const { t, library } = await keywordOnlyApp();
    const lib = await library();
    const id = lib.add(line("The zebras crossed the river."));
    await t.deps.queue.drain();
    expect((await lib.search("zebras")).map((r) => r.recording_id)).toEqual([id]);
    expect((await lib.search("the")).map((r) => r.recording_id)).toEqual([id]);
    expect(await lib.search("giraffes")).toEqual([]);
  });

  test("another project's chunks do not change which words a search keeps", async () => {
    const { t, library } = await keywordOnlyApp();
    const mine = await library();
    const id = mine.add(line("We saw llamas at the farm."));
    for (const text of ["Budget review.", "Hiring plan.", "Vendor call."]) mine.add(line(text));
    const theirs = await library();
    for (let i = 0; i < 10; i++) theirs.add(line(`Llamas report number ${i}.`));
    await t.deps.queue.drain();
    expect((await mine.search("llamas")).map((r) => r.recording_id)).toEqual([id]);
  });

  test("a word searched before it was indexed is found once it is", async () => {
    const { t, library } = await keywordOnlyApp();
    const lib = await library();
    lib.add(line("Nothing about animals here."));
    await t.deps.queue.drain();
    expect(await lib.search("okapi")).toEqual([]);
    const id = lib.add(line("An okapi at the zoo."));
    await t.deps.queue.drain();
    expect((await lib.search("okapi")).map((r) => r.recording_id)).toEqual([id]);
  });

  test("on a large library the rarest words are kept and the common ones left out", async () => {
    const { t, library } = await keywordOnlyApp();
    const lib = await library();
    // 30 s segments make one chunk each: "meeting" is in 5,200 chunks and "agenda" in 5,100
    // (both above the postings budget), "tapir" in one.
    lib.add(
      Array.from(
        { length: 5_200 },
        (_, i): Line => [i * 30, i * 30 + 30, "SPEAKER_1", `Meeting note ${i}.${i === 7 ? " A tapir." : ""}${i < 5_100 ? " Agenda." : ""}`],
      ),
    );
    await t.deps.queue.drain();
    const found = await lib.search("meeting tapir");
    expect(found[0].chunk_text).toContain("tapir");
    expect(found.every((r) => r.chunk_text.includes("tapir"))).toBe(true);
    expect((await lib.search("meeting")).length).toBe(8);
    // Only common words: the rarest of them is searched.
    expect((await lib.search("meeting agenda")).every((r) => r.chunk_text.includes("Agenda"))).toBe(true);
  });

  test("a query of common words only scores the newest 2,000 matches of its rarest word, however many there are (decision 200)", async () => {
    const { t, library } = await keywordOnlyApp();
    const lib = await library();
    // "meeting" is in 5,301 chunks; the 3,000th newest says it three times in the fewest
    // words, the best BM25 match of all, and the newest says it three times in four.
    lib.add(Array.from({ length: 5_300 }, (_, i): Line => [i * 30, i * 30 + 30, "SPEAKER_1", i === 2_300 ? "Meeting meeting meeting." : `Meeting note ${i}.`]));
    const newest = lib.add(line("Meeting meeting meeting again."));
    await t.deps.queue.drain();
    const found = await lib.search("meeting");
    expect(found[0].chunk_text).toBe("Meeting meeting meeting again.");
    expect(found[0].recording_id).toBe(newest);
    // The 3,000th newest is past the newest 2,000: not scored, so not found, where a full scoring would rank it first.
    expect(found.some((r) => r.chunk_text === "Meeting meeting meeting.")).toBe(false);
  });

  test("of common words only, the one whose newest matches reach furthest back is searched, not the one with the fewest matches (decision 200)", async () => {
    const { t, library } = await keywordOnlyApp();
    const lib = await library();
    // "beta" is in the oldest 5,200 chunks, "alpha" in the newest 5,100: alpha has fewer
    // matches, but its newest 5,001 are packed into the last stretch, where beta's reach back
    // to the start. Each word is counted once, just past the budget, from the newest match.
    lib.add(Array.from({ length: 10_300 }, (_, i): Line => [i * 30, i * 30 + 30, "SPEAKER_1", `${i < 5_200 ? "Beta" : "Alpha"} note ${i}.`]));
    await t.deps.queue.drain();
    const found = await lib.search("alpha beta");
    expect(found).toHaveLength(8);
    expect(found.every((r) => r.chunk_text.startsWith("Beta"))).toBe(true);
  });

  test("a word whose newest 2,001 matches are dense enough to put it past the budget is walked no further, and one sparser is counted on (decision 217)", async () => {
    const { DocumentCounts } = await import("../../src/modules/search/store");
    const { t, library } = await keywordOnlyApp();
    const lib = await library();
    // "gamma" is in every one of the newest 5,300 chunks: its newest 2,001 alone tell it is common.
    // "delta" is in one chunk in three of the oldest 7,500: its newest 2,001 reach back ~6,000
    // chunks of 7,500+, so at that density the index holds fewer than the budget (it holds 2,500).
    lib.add(Array.from({ length: 7_500 }, (_, i): Line => [i * 30, i * 30 + 30, "SPEAKER_1", i % 3 === 0 ? `Delta item ${i}.` : `Plain item ${i}.`]));
    lib.add(Array.from({ length: 5_300 }, (_, i): Line => [i * 30, i * 30 + 30, "SPEAKER_1", `Gamma note ${i}.`]));
    await t.deps.queue.drain();
    const caps: Record<string, number[]> = {};
    const walk = DocumentCounts.prototype.newest;
    DocumentCounts.prototype.newest = function (this: InstanceType<typeof DocumentCounts>, owner, key, match, cap) {
      (caps[key] ??= []).push(cap);
      return walk.call(this, owner, key, match, cap);
    };
    try {
      expect(await lib.search("gamma")).toHaveLength(8);
      expect(await lib.search("delta")).toHaveLength(8);
    } finally {
      DocumentCounts.prototype.newest = walk;
    }
    expect(caps.gamma).toEqual([2_001]);
    expect(caps.delta).toEqual([2_001, 5_001]);
  }, 60_000);

  test("on a large library, another end user's chunks never come back, and a word only they say does not crowd out the user's own", async () => {
    const { t, library } = await keywordOnlyApp();
    const big = await library();
    const notes = big.add(Array.from({ length: 5_200 }, (_, i): Line => [i * 30, i * 30 + 30, "SPEAKER_1", `Meeting note ${i}.`]));
    const keeper = big.add(line("Meeting with the zoo keeper."));
    const other = await library();
    other.add(line("The okapi meeting."));
    await t.deps.queue.drain();
    // "okapi" is the rarest word in the index but not in this library: "meeting" is searched instead.
    const found = await big.search("okapi meeting");
    expect(found).toHaveLength(8);
    expect(found.every((r) => r.recording_id === notes || r.recording_id === keeper)).toBe(true);
    // A filter that passes one chunk in 5,201 still finds it, however deep it ranks.
    expect((await big.search("meeting", { recording_ids: [keeper] })).map((r) => r.chunk_text)).toEqual(["Meeting with the zoo keeper."]);
  });
});

describe("BM25 over one end user's library (rankLibrary)", () => {
  test("with one tenant it scores exactly as FTS5's bm25() does, word by word and in sum", async () => {
    const { rankLibrary } = await import("../../src/modules/search/library-bm25");
    const { ownerToken } = await import("../../src/modules/search/store");
    const { BUDGET, DOCTOR, HIKING } = await import("./search-corpus");
    const t = await makeTestApp({ env: { PARLEY_EMBEDDING_MODEL: "all-minilm-l6-v2" } });
    const tenant = makeTenant(t.deps);
    const endUser = (await t.call("POST", "/v1/end-users", { key: tenant.test, body: {} })).body.id as string;
    const scope = { projectId: tenant.project.id, mode: "test" as const };
    for (const lines of [BUDGET, DOCTOR, HIKING]) seedTranscript(t.deps, scope, { endUserId: endUser, recordedAt: null, lines });
    await t.deps.queue.drain();
    const owner = ownerToken(scope, endUser);
    for (const words of [
      ["marketing", "budget", "quarter"],
      ["blood", "pressure"],
      ["hiking", "mountains", "boots"],
    ]) {
      const ours = rankLibrary(t.deps.db, owner, words, 5_000);
      const fts = t.deps.db
        .query<{ rowid: number; s: number }, [string]>("SELECT rowid, bm25(chunks_fts, 0.0, 1.0) AS s FROM chunks_fts WHERE chunks_fts MATCH ?")
        .all(`owner_token : "${owner}" AND text : (${words.map((w) => `"${w}"`).join(" OR ")})`);
      expect(fts.length).toBeGreaterThan(0);
      expect([...ours.keys()].sort()).toEqual(fts.map((r) => r.rowid).sort());
      for (const r of fts) expect(ours.get(r.rowid)!).toBeCloseTo(-r.s, 9);
    }
    // Past the budget of term frequencies read, a word only makes its chunks candidates; the rarest is always weighed.
    const bounded = rankLibrary(t.deps.db, owner, ["mountains", "marketing"], 0);
    expect(Math.max(...bounded.values())).toBeGreaterThan(0.01);
    expect([...bounded.values()].filter((v) => v < 0.01)).toEqual([1e-6]);
  });
});
