import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { conversation, script } from "../../scripts/test-audio/espeak-conversation";
import { formatRttm, parseRttm, RttmError } from "../../src/engines/rttm";
import { diarizationErrorRate } from "../../src/engines/diarization-score";
import { makeTempDir } from "../helpers";

const bun = process.execPath;
const cli = join(import.meta.dir, "../../src/cli.ts");

async function run(args: string[], dir: string) {
  const env = { PATH: process.env.PATH ?? "", PARLEY_DATA_DIR: join(dir, "data"), PARLEY_MODELS_DIR: join(dir, "models") };
  const proc = Bun.spawn([bun, cli, ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** A 16-bit mono WAV of 16 kHz samples, as a recorder would leave it. */
function wav(pcm: Float32Array): Uint8Array {
  const out = new Uint8Array(44 + pcm.length * 2);
  const v = new DataView(out.buffer);
  [..."RIFF"].forEach((c, i) => v.setUint8(i, c.charCodeAt(0)));
  v.setUint32(4, 36 + pcm.length * 2, true);
  [..."WAVEfmt "].forEach((c, i) => v.setUint8(8 + i, c.charCodeAt(0)));
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, 1, true);
  v.setUint32(24, 16_000, true);
  v.setUint32(28, 32_000, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  [..."data"].forEach((c, i) => v.setUint8(36 + i, c.charCodeAt(0)));
  v.setUint32(40, pcm.length * 2, true);
  pcm.forEach((x, i) => v.setInt16(44 + 2 * i, Math.round(Math.max(-1, Math.min(1, x)) * 32767), true));
  return out;
}

describe("parley eval speakers DIR", () => {
  test("scores each audio + RTTM pair with the installed (classic) diarizer and prints the totals", async () => {
    const dir = makeTempDir();
    const two = conversation(script([0, 1, 0, 1, 0]));
    writeFileSync(join(dir, "consult.wav"), wav(two.pcm));
    writeFileSync(
      join(dir, "consult.rttm"),
      formatRttm(
        "consult",
        two.turns.map((t) => ({ ...t, speaker: t.speaker === 0 ? "doctor" : "patient" })),
      ),
    );
    // A truth that says one person spoke throughout, where two did: scored, and wrong on the count.
    writeFileSync(join(dir, "mislabelled.wav"), wav(two.pcm));
    writeFileSync(join(dir, "mislabelled.rttm"), formatRttm("mislabelled", [{ speaker: "x", start: two.turns[0]!.start, end: two.turns.at(-1)!.end }]));
    const { stdout, stderr, code } = await run(["eval", "speakers", dir], dir);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain("diarizer: classic");
    expect(stdout).toMatch(/consult\s+\d+\.\d% +2\/2 +4\/4/);
    expect(stdout).toMatch(/mislabelled\s+\d+\.\d% +2\/1 +0\/0/);
    expect(stdout).toContain("overall (2 files");
    expect(stdout).toContain("speaker count right in 1/2 (50.0%)");
    const der = Number(/consult\s+(\d+\.\d)%/.exec(stdout)![1]);
    expect(der).toBeLessThan(10);
  });

  test("a missing or malformed RTTM is named per file, the others still scored, exit 1", async () => {
    const dir = makeTempDir();
    const one = conversation(script([1, 1]));
    writeFileSync(join(dir, "good.wav"), wav(one.pcm));
    writeFileSync(join(dir, "good.rttm"), formatRttm("good", one.turns));
    writeFileSync(join(dir, "lonely.wav"), wav(one.pcm));
    writeFileSync(join(dir, "broken.wav"), wav(one.pcm));
    writeFileSync(join(dir, "broken.rttm"), "SPEAKER broken 1 0.5 soon <NA> <NA> A <NA> <NA>\n");
    writeFileSync(join(dir, "orphan.rttm"), formatRttm("orphan", one.turns));
    const { stdout, code } = await run(["eval", "speakers", dir], dir);
    expect(code).toBe(1);
    expect(stdout).toMatch(/good\s+\d+\.\d% +1\/1/);
    expect(stdout).toContain("no lonely.rttm beside the audio");
    expect(stdout).toContain('broken.rttm line 1: duration "soon" is not a time in seconds');
    expect(stdout).toContain("no audio file named orphan beside the RTTM");
    expect(stdout).toContain("overall (1 files");
    expect(stdout).toContain("3 file(s) could not be scored");
  });

  test("a wrong command line is a usage error (exit 2)", async () => {
    const dir = makeTempDir();
    expect((await run(["eval", "speakers"], dir)).code).toBe(2);
    expect((await run(["eval", "speakers", join(dir, "nowhere")], dir)).stderr).toContain("is not a directory");
    expect((await run(["eval", "speakers", dir], dir)).stderr).toContain("no audio or .rttm files");
    expect((await run(["eval", "speakers", dir, "--max-speakers", "0"], dir)).stderr).toContain("--max-speakers takes a whole number from 1 to 20");
  });
});

describe("RTTM and DER", () => {
  test("RTTM reads SPEAKER lines, skips other records and comments, and names the bad line", () => {
    const text =
      "# made by hand\nSPKR-INFO a 1 <NA> <NA> <NA> unknown A <NA>\nSPEAKER a 1 2.5 1.0 <NA> <NA> B <NA> <NA>\nSPEAKER a 1 0.00 2.0 <NA> <NA> A <NA> <NA>\n";
    expect(parseRttm(text)).toEqual([
      { speaker: "A", start: 0, end: 2 },
      { speaker: "B", start: 2.5, end: 3.5 },
    ]);
    expect(() => parseRttm("SPEAKER a 1 0 1\n", "x.rttm")).toThrow(
      new RttmError("x.rttm line 1: a SPEAKER line has 9 or 10 fields (type, file, channel, start, duration, NA, NA, speaker, ...), found 5"),
    );
    expect(() => parseRttm("# nothing\n", "y.rttm")).toThrow("y.rttm: no SPEAKER lines");
  });

  test("DER: 0 for the truth itself whatever the names, confusion counted under the best mapping, overlap counted per speaker", () => {
    const truth = [
      { speaker: "A", start: 0, end: 10 },
      { speaker: "B", start: 10, end: 20 },
    ];
    expect(
      diarizationErrorRate(
        truth,
        truth.map((t) => ({ ...t, speaker: t.speaker === "A" ? "SPEAKER_2" : "SPEAKER_1" })),
      ),
    ).toBe(0);
    // All one speaker: B's 10 s (less its collars) are confused.
    expect(diarizationErrorRate(truth, [{ speaker: "S", start: 0, end: 20 }])).toBeCloseTo(9.5 / 19, 2);
    // Nothing found: all missed.
    expect(diarizationErrorRate(truth, [])).toBe(1);
    // Two true speakers at once, one found: half the overlapped speech is missed.
    const overlapped = [
      { speaker: "A", start: 0, end: 10 },
      { speaker: "B", start: 0, end: 10 },
    ];
    expect(diarizationErrorRate(overlapped, [{ speaker: "S", start: 0, end: 10 }])).toBeCloseTo(0.5, 2);
  });
});
