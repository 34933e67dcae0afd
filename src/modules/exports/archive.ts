import type { Deps } from "../../deps";
import { chunksOf } from "../../storage/storage";
import type { Tenant } from "../../tenancy";
import { PARLEY_VERSION } from "../../version";
import { custodyOf } from "../audit/service";
import { HAS_AUDIO } from "../recordings/audio";
import { findRecording, toRecording } from "../recordings/service";
import { listSummaryRows } from "../summaries/service";
import { revisionsOf } from "../transcriptions/revisions";
import { atRevision, listTranscriptionRows } from "../transcriptions/service";
import type { ExportFilter, ExportRow } from "./store";
import { toSrt, toText, toVtt } from "./subtitles";
import type { WrittenEntry, ZipEntry } from "./zip";

/** Every version of a recording's transcripts and summaries goes in; more than this many of either is not a real recording's history. */
const ALL = { limit: 100 };

const json = (value: unknown) => new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);
const text = (value: string) => new TextEncoder().encode(value);

/** Archive layout version, in the manifest: `parley export verify` reads this one. */
export const EXPORT_FORMAT = "parley-export/1";

/**
 * The files of an export, in order: per recording its record, original audio, each
 * completed transcript as JSON, SRT, VTT and TXT (the latest revision; a corrected one also
 * with its revision records and every earlier revision as JSON), each completed summary as JSON and
 * TXT; then custody.json (the audit rows about them, with hashes); last manifest.json,
 * listing every file before it with its size and SHA-256 as written (`written` is filled
 * by the zip writer as each entry passes). Recordings deleted since the export was asked
 * for are listed as missing, not silently left out.
 */
export async function* archiveEntries(deps: Pick<Deps, "db" | "storage">, tenant: Tenant, exp: ExportRow, written: WrittenEntry[]): AsyncGenerator<ZipEntry> {
  const { db } = deps;
  const ids = JSON.parse(exp.recording_ids) as string[];
  const missing: string[] = [];
  for (const id of ids) {
    const recording = findRecording(db, tenant, id);
    if (!recording) {
      missing.push(id);
      continue;
    }
    const dir = `recordings/${id}`;
    yield { name: `${dir}/recording.json`, data: json(toRecording(recording)) };
    if (recording.storage_key && HAS_AUDIO.includes(recording.status))
      yield { name: `${dir}/audio.${recording.format ?? "bin"}`, data: chunksOf(deps.storage.read(recording.storage_key)) };
    for (const t of listTranscriptionRows(db, tenant, { recordingId: id }, ALL).data.filter((t) => t.status === "completed")) {
      yield { name: `${dir}/transcripts/${t.id}.json`, data: json(t) };
      yield { name: `${dir}/transcripts/${t.id}.srt`, data: text(toSrt(t.segments)) };
      yield { name: `${dir}/transcripts/${t.id}.vtt`, data: text(toVtt(t.segments)) };
      yield { name: `${dir}/transcripts/${t.id}.txt`, data: text(toText(t.segments)) };
      // A corrected transcript goes with its history: who changed what and when, and each earlier revision in full.
      if (t.revision > 0) {
        yield { name: `${dir}/transcripts/${t.id}.revisions.json`, data: json(revisionsOf(db, tenant, t)) };
        for (let n = 0; n < t.revision; n++) yield { name: `${dir}/transcripts/${t.id}.r${n}.json`, data: json(atRevision(db, tenant, t, n)) };
      }
      for (const s of listSummaryRows(db, tenant, { transcriptionId: t.id }, ALL).data.filter((s) => s.status === "completed")) {
        yield { name: `${dir}/summaries/${s.id}.json`, data: json(s) };
        yield { name: `${dir}/summaries/${s.id}.txt`, data: text(`${s.text ?? ""}\n`) };
      }
    }
  }
  yield { name: "custody.json", data: json(custodyOf(db, tenant, [exp.id, ...ids])) };
  yield {
    name: "manifest.json",
    data: json({
      format: EXPORT_FORMAT,
      generator: `parley ${PARLEY_VERSION}`,
      export: { id: exp.id, matter: exp.matter, ...(JSON.parse(exp.filter) as ExportFilter), recording_ids: ids, created_at: exp.created_at },
      missing_recordings: missing,
      files: written.map((f) => ({ path: f.name, size: f.size, sha256: f.sha256 })),
    }),
  };
}
