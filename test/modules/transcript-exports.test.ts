import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { TwoSpeakerTestDiarizer } from "../../src/engines/diarizer.test-double";
import { wrap } from "../../src/modules/transcriptions/export/legal";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { concat, silence, voiced, wav } from "./pipeline-fixtures";
import { createRecording, put, sha256 } from "./recordings-support";

let t: Awaited<ReturnType<typeof makeTestApp>>;
let acme: ReturnType<typeof makeTenant>;
let recording: { id: string; sha256: string };
let id: string;
/** The model file the scripted transcriber stands for: its digest is what the certification states. */
const MODEL_BYTES = new TextEncoder().encode("a stand-in model file for the certification");

/** Words long enough to wrap: the legal layout's line counting has something to count. */
const LONG = "the witness stated that the contract was signed on the fourth of March in the presence of both parties and their counsel";

beforeAll(async () => {
  // The bursts at 0-2 s and 5-7 s reach the transcriber joined; the speakers change at 5 s and 6.15 s.
  const segments = () => [
    { start: 0.2, end: 1.8, text: " Please state your name for the record.", confidence: 0.9 },
    { start: 2.5, end: 3.5, text: ` My name is José Müller and ${LONG}.`, confidence: 0.9 },
    { start: 3.6, end: 4.2, text: " mumble mumble", confidence: 0.2 },
  ];
  t = await makeTestApp({ engines: { transcriber: new ScriptedTranscriber({ segments }), diarizer: new TwoSpeakerTestDiarizer([5, 6.15]) } });
  mkdirSync(t.deps.config.modelsDir, { recursive: true });
  writeFileSync(join(t.deps.config.modelsDir, "test-scripted-transcriber"), MODEL_BYTES);
  acme = makeTenant(t.deps);
  const rec = await createRecording(t, acme.test, {
    name: "Deposition",
    recorded_at: "2026-03-04T10:00:00.000Z",
    metadata: { matter: "Müller v. Acme Corp., No. 26-1234", participants: ["José Müller", "Counsel Dana Reyes"] },
  });
  const bytes = wav(concat(voiced(2), silence(3), voiced(2)));
  expect((await put(t, acme.test, rec.id, bytes)).status).toBe(200);
  const completion = { sha256: sha256(bytes), file_size_bytes: bytes.length };
  await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: acme.test, body: completion });
  await t.deps.queue.drain();
  expect((await t.call("POST", `/v1/recordings/${rec.id}/upload-complete`, { key: acme.test, body: completion })).status).toBe(200);
  recording = { id: rec.id, sha256: completion.sha256 };
  await t.deps.queue.drain();
  const listed = (await t.call("GET", `/v1/transcriptions?recording_id=${rec.id}`, { key: acme.test })).body.data;
  id = listed[0]?.id ?? (await t.call("POST", "/v1/transcriptions", { key: acme.test, body: { recording_id: rec.id } })).body.id;
  await t.deps.queue.drain();
  expect((await t.call("GET", `/v1/transcriptions/${id}`, { key: acme.test })).body.status).toBe("completed");
  await t.call("PATCH", `/v1/transcriptions/${id}/segments/0`, { key: acme.test, body: { text: "Please state your full name for the record." } });
  await t.call("PATCH", `/v1/transcriptions/${id}/segments/0`, { key: acme.test, body: { speaker: "Counsel Dana Reyes", apply_to: "speaker" } });
});

const exported = (format: string, query = "") => t.call("GET", `/v1/transcriptions/${id}/export?format=${format}${query}`, { key: acme.test });

/** The bytes of a binary reply (the test client reads a body it cannot parse as text). */
async function bytesOf(format: string, query = ""): Promise<Uint8Array> {
  const r = await t.app.handle(
    new Request(`http://localhost/v1/transcriptions/${id}/export?format=${format}${query}`, { headers: { authorization: `Bearer ${acme.test}` } }),
  );
  expect(r.status).toBe(200);
  return new Uint8Array(await r.arrayBuffer());
}

/** Runs a real reader over a file: pdftotext (to stdout), unzip (-l, or -p with the member to print). */
function read(command: string[], bytes: Uint8Array, name: string, member?: string): string {
  const path = join(makeTempDir(), name);
  writeFileSync(path, bytes);
  const run = Bun.spawnSync([...command, path, ...(command[0] === "pdftotext" ? ["-"] : []), ...(member ? [member] : [])]);
  if (run.exitCode !== 0) throw new Error(`${command[0]} failed: ${run.stderr.toString()}`);
  return run.stdout.toString();
}

/** An XML element: its name, its children, the text directly inside it. */
type XmlNode = { name: string; children: XmlNode[]; text: string };

/** A small strict XML reader: every element closed in order (or the parse throws), entities decoded, declarations skipped. */
function parseXml(xml: string): XmlNode {
  const root: XmlNode = { name: "#document", children: [], text: "" };
  const open = [root];
  const decode = (s: string) =>
    s.replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-f]+);/gi, (_, e: string) =>
      e[0] === "#"
        ? String.fromCodePoint(Number(e[1] === "x" ? `0${e.slice(1)}` : e.slice(1)))
        : ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" } as Record<string, string>)[e]!,
    );
  for (const [token] of xml.matchAll(/<[^>]+>|[^<]+/g)) {
    const top = open.at(-1)!;
    if (token.startsWith("<?") || token.startsWith("<!")) continue;
    if (token.startsWith("</")) {
      const name = token.slice(2, -1).trim();
      if (top.name !== name) throw new Error(`XML: </${name}> closes <${top.name}>`);
      open.pop();
    } else if (token.startsWith("<")) {
      const node = { name: token.slice(1).match(/^[^\s/>]+/)![0], children: [], text: "" };
      top.children.push(node);
      if (!token.endsWith("/>")) open.push(node);
    } else top.text += decode(token);
  }
  if (open.length !== 1) throw new Error(`XML: <${open.at(-1)!.name}> is never closed`);
  return root;
}

/** The first element named `name` at any depth under `node`. */
function child(node: XmlNode | undefined, name: string): XmlNode | undefined {
  for (const c of node?.children ?? []) {
    const found = c.name === name ? c : child(c, name);
    if (found) return found;
  }
  return undefined;
}

/** A paragraph's text as Word shows it: its runs' w:t, a w:tab as a tab. */
const textOf = (node: XmlNode): string =>
  node.children.map((c) => (c.name === "w:t" ? c.text : c.name === "w:tab" && node.name === "w:r" ? "\t" : textOf(c))).join("");

/** Every numbered line of a page: [number, the rest]. */
const numbered = (page: string) =>
  page
    .split("\n")
    .map((l) => l.match(/^\s*(\d{1,2})(?:\s+(.*))?$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => [Number(m[1]), (m[2] ?? "").trim()] as const);

describe("the legal layout's lines", () => {
  test("words wrap at spaces; a word longer than a line is cut where the line ends; nothing is lost", () => {
    expect(wrap("one two three", 7)).toEqual(["one two", "three"]);
    expect(wrap(`${"x".repeat(10)} tail`, 4)).toEqual(["xxxx", "xxxx", "xx", "tail"]);
    expect(wrap("a  b\n c", 66)).toEqual(["a b c"]);
    expect(wrap("", 66)).toEqual([""]);
  });
});

describe("GET /transcriptions/{id}/export", () => {
  test("txt, srt and vtt carry speaker names and the latest revision; low confidence reads [inaudible hh:mm:ss]", async () => {
    const txt = await exported("txt");
    expect(txt.status).toBe(200);
    expect(txt.headers.get("content-type")).toStartWith("text/plain");
    expect(txt.headers.get("content-disposition")).toContain(`${id}-revision-2.txt`);
    expect(txt.body).toContain("Counsel Dana Reyes: Please state your full name for the record.");
    expect(txt.body).toContain("mumble mumble");

    const srt = await exported("srt", "&inaudible_below=0.5");
    expect(srt.headers.get("content-type")).toStartWith("application/x-subrip");
    expect(srt.body).toMatch(/^1\n00:00:00,\d{3} --> 00:00:0\d,\d{3}\nCounsel Dana Reyes: Please state your full name for the record\.\n/);
    expect(srt.body).toMatch(/\nCounsel Dana Reyes: \[inaudible 00:00:0\d\]\n/);
    expect(srt.body).not.toContain("mumble");

    const vtt = await exported("vtt");
    expect(vtt.body).toStartWith("WEBVTT\n");
    expect(vtt.body).toContain("<v Counsel Dana Reyes>Please state your full name for the record.");

    const original = await exported("txt", "&revision=0");
    expect(original.body).toContain("Please state your name for the record.");
    expect(original.headers.get("content-disposition")).toContain(`${id}-revision-0.txt`);
  });

  test("json is the transcription record at the revision asked", async () => {
    const r = await exported("json", "&revision=1");
    expect(r.headers.get("content-type")).toStartWith("application/json");
    expect(r.body).toMatchObject({ id, revision: 1, status: "completed" });
    expect(r.body.segments[0].text).toBe("Please state your full name for the record.");
  });

  test("pdf: a verbatim legal transcript pdftotext reads, 25 numbered lines a page, certified", async () => {
    const text = read(["pdftotext", "-layout"], await bytesOf("pdf", "&inaudible_below=0.5"), "transcript.pdf");
    const pages = text.split("\f").filter((p) => p.trim());
    expect(pages.length).toBeGreaterThanOrEqual(3);
    for (const [n, page] of pages.entries()) {
      expect(numbered(page).map(([number]) => number)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(page).toContain(`Page ${n + 1} of ${pages.length}`);
    }
    const [caption, transcript] = pages;
    expect(caption).toContain("VERBATIM TRANSCRIPT OF RECORDING");
    expect(caption).toContain("Matter: Müller v. Acme Corp., No. 26-1234");
    expect(caption).toContain("Date: 2026-03-04");
    expect(caption).toContain("José Müller");
    const lines = numbered(transcript!);
    expect(lines[0]).toEqual([1, expect.stringMatching(/^00:00:00\s+COUNSEL DANA REYES: Please state your full name for the record\.$/)]);
    expect(lines[1]![1]).toMatch(/^00:00:0\d\s+SPEAKER 2: My name is José Müller and the witness stated that the$/);
    // The long answer wraps onto numbered lines of its own, without a time.
    expect(lines[2]).toEqual([2 + 1, "contract was signed on the fourth of March in the presence of both"]);
    expect(transcript).toMatch(/00:00:0(\d)\s+COUNSEL DANA REYES: \[inaudible 00:00:0\1\]/);
    expect(transcript).not.toContain("mumble");
    const certification = pages.slice(2).join("\n");
    expect(certification).toContain("CERTIFICATION");
    expect(certification).toContain(recording.sha256);
    expect(certification).toContain(new Bun.CryptoHasher("sha256").update(MODEL_BYTES).digest("hex"));
    expect(certification).toContain("Model: test-scripted-transcriber");
    expect(certification).toContain("Revision: 2");
    expect(certification).toMatch(/Revision 1, [-\d:.TZ]+, by secret credential\s/);
    expect(certification).toMatch(/segment 0 text "Please state your name for the record\." to\s+(\d+\s+)?"Please state your full name/);
    expect(certification).toContain('speaker SPEAKER_1 renamed "Speaker 1" to "Counsel Dana Reyes"');
  });

  test("docx: the same numbered pages, read back with unzip and an XML parse; the face is embedded", async () => {
    const bytes = await bytesOf("docx", "&inaudible_below=0.5");
    const listing = read(["unzip", "-l"], bytes, "transcript.docx");
    expect(listing).toContain("word/document.xml");
    expect(listing).toMatch(/word\/fonts\/\S+\.odttf/);
    const body = child(parseXml(read(["unzip", "-p"], bytes, "transcript.docx", "word/document.xml")), "w:body")!;
    const lines = body.children
      .filter((p) => p.name === "w:p")
      .map((p) => ({
        newPage: !!child(child(p, "w:pPr"), "w:pageBreakBefore"),
        cells: textOf(p).split("\t"),
      }));
    // Pages open with a break; each holds 25 lines numbered 1 to 25.
    const pages: (typeof lines)[] = [];
    for (const line of lines) line.newPage || pages.length === 0 ? pages.push([line]) : pages.at(-1)!.push(line);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    for (const page of pages) expect(page.map((l) => Number(l.cells[0]))).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(pages[0]!.map((l) => l.cells[2]).join("\n")).toContain("Matter: Müller v. Acme Corp., No. 26-1234");
    expect(pages[1]![0]!.cells).toEqual([" 1", "00:00:00", "COUNSEL DANA REYES: Please state your full name for the record."]);
    expect(pages[1]![2]!.cells).toEqual([" 3", "", "contract was signed on the fourth of March in the presence of both"]);
    const rest = pages
      .slice(1)
      .flat()
      .map((l) => l.cells[2])
      .join("\n");
    expect(rest).toMatch(/\nCOUNSEL DANA REYES: \[inaudible 00:00:0\d\]\n/);
    expect(rest).toContain(recording.sha256);
  });

  test("a compiled executable writes the PDF and the DOCX with the face it carries (no font read from a package folder)", async () => {
    const dir = makeTempDir();
    const source = (file: string) => JSON.stringify(join(import.meta.dir, "../../src/modules/transcriptions/export", file));
    writeFileSync(
      join(dir, "entry.ts"),
      `import { writeFileSync } from "node:fs";
import { renderLegalDocx } from ${source("docx.ts")};
import { layOutLegalTranscript } from ${source("legal.ts")};
import { renderLegalPdf } from ${source("pdf.ts")};
const transcription = { id: "txn_1", recording_id: "rec_1", language: "de", revision: 0, model: "m", speakers: [{ id: "SPEAKER_1", label: "Łukasz Dvořák" }],
  segments: [{ start: 1, end: 2, text: "Grüße aus Köln", speaker: "SPEAKER_1", confidence: 0.9 }] };
const recording = { id: "rec_1", name: null, recorded_at: null, created_at: "2026-01-01T00:00:00Z", sha256: null, metadata: {} };
const doc = layOutLegalTranscript({ transcription, recording, modelSha256: null, revisions: [] } as never, (s) => s.text, "now");
writeFileSync(process.argv[2] + ".pdf", await renderLegalPdf(doc, new Date(0)));
writeFileSync(process.argv[2] + ".docx", await renderLegalDocx(doc));
`,
    );
    const built = Bun.spawnSync([process.execPath, "build", "--compile", join(dir, "entry.ts"), "--outfile", join(dir, "writer")], { cwd: dir });
    expect(built.exitCode).toBe(0);
    // Run from elsewhere, as an installed executable runs: nothing of the source tree is beside it.
    const run = Bun.spawnSync([join(dir, "writer"), join(dir, "out")], { cwd: makeTempDir() });
    expect(run.exitCode).toBe(0);
    const fonts = Bun.spawnSync(["pdffonts", join(dir, "out.pdf")]).stdout.toString();
    expect(fonts).toMatch(/\+DejaVuSansMono\s+CID TrueType\s+Identity-H\s+yes yes yes/);
    expect(Bun.spawnSync(["pdftotext", "-layout", join(dir, "out.pdf"), "-"]).stdout.toString()).toContain("ŁUKASZ DVOŘÁK: Grüße aus Köln");
    expect(Bun.spawnSync(["unzip", "-l", join(dir, "out.docx")]).stdout.toString()).toMatch(/word\/fonts\/\S+\.odttf/);
  }, 60_000);

  test("bad input: an unknown format, a revision it never had, before completion; changes nothing", async () => {
    const unknown = await exported("odt");
    expect([unknown.status, unknown.body.error.code, unknown.body.error.param]).toEqual([422, "validation_error", "format"]);
    const never = await exported("pdf", "&revision=9");
    expect([never.status, never.body.error.code, never.body.error.param]).toEqual([404, "not_found", "revision"]);
    const threshold = await exported("txt", "&inaudible_below=2");
    expect(threshold.status).toBe(422);
    expect((await t.call("GET", "/v1/transcriptions/txn_nope/export?format=pdf", { key: acme.test })).status).toBe(404);
    expect((await t.call("GET", `/v1/transcriptions/${id}`, { key: acme.test })).body.revision).toBe(2);
  });

  test("an export is audited as one", async () => {
    await exported("txt");
    const actions = t.deps.db
      .query<{ action: string }, [string]>(
        "SELECT e.action FROM audit_events e JOIN audit_event_resources r ON r.seq = e.seq WHERE r.resource_id = ? AND e.action = 'transcription.export'",
      )
      .all(id);
    expect(actions.length).toBeGreaterThan(0);
  });
});
