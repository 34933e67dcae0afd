import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/crypto";
import { SingleSpeakerDiarizer } from "../../src/engines/diarizer";
import { ScriptedLlm } from "../../src/engines/llm.test-double";
import { ScriptedTranscriber } from "../../src/engines/transcriber.test-double";
import { readZip } from "../../src/modules/exports/zip";
import { makeTempDir, makeTenant, makeTestApp } from "../helpers";
import { concat, seedRecording, silence, voiced, wav } from "./pipeline-fixtures";

const CLI = join(import.meta.dir, "..", "..", "src", "cli.ts");

async function parley(args: string[]) {
  const proc = Bun.spawn([process.execPath, CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", PARLEY_DATA_DIR: makeTempDir(), PARLEY_LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** An end user with two transcribed and summarised recordings. */
async function exportApp() {
  const transcriber = new ScriptedTranscriber({
    segments: (pcm) => [{ start: 0.5, end: pcm.length / 16_000, text: " Exhibit A was signed on Monday.", confidence: 0.9 }],
  });
  // One speaker: the classic diarizer would tell the fixture's tone bursts apart as voices.
  const t = await makeTestApp({ engines: { transcriber, llm: new ScriptedLlm(), diarizer: new SingleSpeakerDiarizer() } });
  const tenant = makeTenant(t.deps);
  const key = tenant.test;
  const endUser = (await t.call("POST", "/v1/end-users", { key, body: { name: "Client" } })).body.id as string;
  const audio = wav(concat(voiced(2), silence(1), voiced(2)));
  const recordings: string[] = [];
  for (let i = 0; i < 2; i++) {
    const id = await seedRecording(t.deps, { projectId: tenant.project.id, mode: "test" }, audio, { endUserId: endUser });
    await t.call("POST", "/v1/transcriptions", { key, body: { recording_id: id } });
    recordings.push(id);
  }
  await t.deps.queue.drain();
  const exported = async (body: object) => {
    const created = await t.call("POST", "/v1/exports", { key, body });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ status: "processing", download_url: null });
    await t.deps.queue.drain();
    const done = (await t.call("GET", `/v1/exports/${created.body.id}`, { key })).body;
    expect(done.status).toBe("completed");
    const download = await t.app.handle(new Request(`http://localhost/v1/exports/${done.id}/download`, { headers: { authorization: `Bearer ${key}` } }));
    expect(download.status).toBe(200);
    const bytes = new Uint8Array(await download.arrayBuffer());
    const file = join(makeTempDir(), `${done.id}.zip`);
    writeFileSync(file, bytes);
    return { done, bytes, file };
  };
  return { t, tenant, key, endUser, audio, recordings, exported };
}

describe("eDiscovery exports", () => {
  test("an end user's export holds audio, transcripts in four formats, summaries, custody and a manifest that matches every file", async () => {
    const { t, key, endUser, audio, recordings, exported } = await exportApp();
    const { done, bytes, file } = await exported({ matter: "Doe v. Roe", end_user_id: endUser });
    expect(done).toMatchObject({
      matter: "Doe v. Roe",
      end_user_id: endUser,
      recording_ids: recordings,
      encrypted: false,
      sha256: sha256Hex(bytes),
      size_bytes: bytes.length,
    });
    expect(done.download_url).toEndWith(`/v1/exports/${done.id}/download`);

    const files = new Map(readZip(bytes).map((e) => [e.name, e.data]));
    const manifest = JSON.parse(new TextDecoder().decode(files.get("manifest.json")!));
    expect(manifest.export).toMatchObject({ id: done.id, matter: "Doe v. Roe", recording_ids: recordings });
    expect(manifest.files.map((f: { path: string }) => f.path).sort()).toEqual([...files.keys()].filter((n) => n !== "manifest.json").sort());
    for (const f of manifest.files)
      expect({ path: f.path, size: files.get(f.path)!.length, sha256: sha256Hex(files.get(f.path)!) }).toEqual({
        path: f.path,
        size: f.size,
        sha256: f.sha256,
      });

    const rec = recordings[0]!;
    // Named after the format the upload probe found (a seeded row has none: .bin).
    const audioEntry = [...files.keys()].find((n) => n.startsWith(`recordings/${rec}/audio.`))!;
    expect(Buffer.from(files.get(audioEntry)!).equals(Buffer.from(audio))).toBe(true);
    const transcript = [...files.keys()].find((n) => n.startsWith(`recordings/${rec}/transcripts/`) && n.endsWith(".json"))!;
    const base = transcript.slice(0, -".json".length);
    const read = (name: string) => new TextDecoder().decode(files.get(name)!);
    expect(read(`${base}.srt`)).toStartWith("1\n00:00:00,500 --> ");
    expect(read(`${base}.srt`)).toContain("Exhibit A was signed on Monday.");
    expect(read(`${base}.vtt`)).toStartWith("WEBVTT\n\n00:00:00.500 --> ");
    expect(read(`${base}.txt`)).toContain("[00:00:00.500]");
    expect([...files.keys()].some((n) => n.startsWith(`recordings/${rec}/summaries/`) && n.endsWith(".txt"))).toBe(true);

    const custody = JSON.parse(read("custody.json"));
    expect(custody.chain_head.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(custody.events.find((e: { action: string }) => e.action === "export.create").resource_ids).toEqual([done.id, ...recordings]);

    const verified = await parley(["export", "verify", file]);
    expect([verified.code, verified.stdout]).toEqual([0, expect.stringContaining(`export ${done.id} verified`)]);
    // One flipped byte in the audio is named.
    const tampered = Buffer.from(bytes);
    tampered[tampered.indexOf(Buffer.from(audio).subarray(100, 140)) + 10]! ^= 0xff;
    writeFileSync(file, tampered);
    const broken = await parley(["export", "verify", file]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`${audioEntry} does not match its SHA-256`);

    const downloads = (await t.call("GET", `/v1/audit-events?action=export.download&resource_id=${done.id}`, { key })).body.data;
    expect(downloads).toHaveLength(1);
  });

  test("a corrected transcript goes with its history: the revision records and every earlier revision, each in the manifest", async () => {
    const { t, key, endUser, recordings, exported } = await exportApp();
    const transcription = (await t.call("GET", `/v1/transcriptions?recording_id=${recordings[0]}`, { key })).body.data[0];
    const corrected = await t.call("PATCH", `/v1/transcriptions/${transcription.id}/segments/0`, { key, body: { text: "Exhibit B was signed on Tuesday." } });
    expect(corrected.body.revision).toBe(1);
    const { bytes } = await exported({ matter: "Doe v. Roe", end_user_id: endUser });
    const files = new Map(readZip(bytes).map((e) => [e.name, new TextDecoder().decode(e.data)]));
    const base = `recordings/${recordings[0]}/transcripts/${transcription.id}`;
    expect(JSON.parse(files.get(`${base}.json`)!).segments[0].text).toBe("Exhibit B was signed on Tuesday.");
    const original = JSON.parse(files.get(`${base}.r0.json`)!);
    expect([original.revision, original.segments[0].text]).toEqual([0, "Exhibit A was signed on Monday."]);
    const history = JSON.parse(files.get(`${base}.revisions.json`)!);
    expect(history.map((r: { revision: number }) => r.revision)).toEqual([1, 0]);
    expect(history[0].changes[0]).toEqual({ segment: 0, field: "text", from: "Exhibit A was signed on Monday.", to: "Exhibit B was signed on Tuesday." });
    const listed = JSON.parse(files.get("manifest.json")!).files.map((f: { path: string }) => f.path);
    expect(listed).toEqual(expect.arrayContaining([`${base}.r0.json`, `${base}.revisions.json`]));
    // An uncorrected transcript has no history files.
    expect([...files.keys()].filter((n) => n.startsWith(`recordings/${recordings[1]}/`) && /\.(r\d+|revisions)\.json$/.test(n))).toEqual([]);
  });

  test("a passphrase encrypts the archive; verify needs it; the passphrase is not kept", async () => {
    const { t, recordings, exported } = await exportApp();
    const passphrase = "correct horse battery staple";
    const { done, bytes, file } = await exported({ recording_ids: [recordings[1]], passphrase });
    expect(done.encrypted).toBe(true);
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe("PARLEYX1");
    expect(Buffer.from(bytes).includes(Buffer.from("Exhibit A"))).toBe(false);
    expect(t.deps.db.query("SELECT passphrase_sealed FROM exports WHERE id = ?").get(done.id)).toEqual({ passphrase_sealed: null });

    expect((await parley(["export", "verify", file])).stderr).toContain("encrypted");
    const dir = makeTempDir();
    writeFileSync(join(dir, "wrong"), "not the passphrase at all\n");
    writeFileSync(join(dir, "right"), `${passphrase}\n`);
    expect((await parley(["export", "verify", file, "--passphrase-file", join(dir, "wrong")])).code).toBe(1);
    const ok = await parley(["export", "verify", file, "--passphrase-file", join(dir, "right")]);
    expect([ok.code, ok.stdout]).toEqual([0, expect.stringContaining("verified")]);
  });

  test("selection is validated and confined to the key's project; confined keys cannot export", async () => {
    const { t, tenant, key, endUser, recordings } = await exportApp();
    const cases: [object, number, string][] = [
      [{}, 422, "end_user_id"],
      [{ end_user_id: endUser, recording_ids: recordings }, 422, "recording_ids"],
      [{ end_user_id: endUser, passphrase: "short" }, 422, "passphrase"],
      [{ recording_ids: ["rec_unknown"] }, 404, "recording_ids"],
    ];
    for (const [body, status, param] of cases) {
      const r = await t.call("POST", "/v1/exports", { key, body });
      expect({ body, status: r.status, param: r.body.error?.param }).toEqual({ body, status, param });
    }
    const other = makeTenant(t.deps);
    expect((await t.call("POST", "/v1/exports", { key: other.test, body: { end_user_id: endUser } })).status).toBe(404);
    expect((await t.call("POST", "/v1/exports", { key: tenant.key("test", { endUserId: endUser }), body: { end_user_id: endUser } })).status).toBe(403);
    const pending = await t.call("POST", "/v1/exports", { key, body: { end_user_id: endUser, created_before: "2000-01-01T00:00:00Z" } });
    expect(pending.body.recording_ids).toEqual([]);
    expect((await t.call("GET", `/v1/exports/${pending.body.id}/download`, { key })).status).toBe(409);
    expect((await t.call("GET", "/v1/exports", { key })).body.total).toBe(1);
  });
});
