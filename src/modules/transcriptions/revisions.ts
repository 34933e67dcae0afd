import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import type { Tenant } from "../../tenancy";
import { actorOf } from "../audit/service";
import { refuseCorrectionIfHeld } from "../legal-holds/service";
import { findRecording } from "../recordings/service";
import { applyEdits, differences, type IndexedEdit } from "./corrections";
import type { Author, BulkEditBody, Change, Revision, SegmentEdit } from "./revisions-schema";
import { findRevision, insertRevision, listRevisionRows, type RevisionContent } from "./revisions-store";
import type { Transcription } from "./schema";
import { disclosedIn, findVisibleTranscription } from "./service";
import { writeLatestRevision } from "./store";

type ReviseDeps = Pick<Deps, "db" | "queue" | "audit" | "clock">;

/** The completed transcription a correction applies to, as the caller may see it; refused while a legal hold covers its recording. */
export function loadForCorrection(db: Database, principal: Principal, id: string): Transcription {
  const transcription = findVisibleTranscription(db, principal, id);
  if (transcription.status !== "completed") {
    throw new ApiError("transcription_not_ready", `Transcription ${id} is ${transcription.status}; it can be corrected once it has completed.`);
  }
  const recording = findRecording(db, principal, transcription.recording_id);
  if (recording) refuseCorrectionIfHeld(db, principal, recording);
  return transcription;
}

const authorOf = (principal: Principal): Author => {
  const actor = actorOf(principal);
  return { type: actor.type, id: actor.id, email: actor.adminEmail ?? null };
};

/**
 * Makes `next` the transcription's latest revision, one above the current: kept whole beside
 * every earlier one (the machine's original is kept as revision 0 the first time), written to
 * the transcription for everything that reads it, indexed again for search and Ask, and
 * audited. Call inside a transaction, with `current` loaded in it.
 */
export function commitRevision(
  deps: ReviseDeps,
  principal: Principal,
  current: Transcription,
  next: RevisionContent,
  changes: Change[],
  restoredFrom: number | null = null,
): Transcription {
  const { db } = deps;
  if (current.revision === 0) {
    const original = { text: current.text, segments: current.segments, speakers: current.speakers };
    insertRevision(db, principal, current.id, {
      number: 0,
      content: original,
      changes: [],
      restoredFrom: null,
      author: null,
      createdAt: current.completed_at ?? current.created_at,
    });
  }
  const number = current.revision + 1;
  const createdAt = deps.clock.now().toISOString();
  insertRevision(db, principal, current.id, { number, content: next, changes, restoredFrom, author: authorOf(principal), createdAt });
  writeLatestRevision(db, principal, current.id, { ...next, revision: number });
  const payload = { project_id: principal.projectId, mode: principal.mode, transcription_id: current.id };
  deps.queue.enqueue("search.index_transcription", payload, { dedupeKey: `search.index_transcription:${current.id}` });
  deps.audit.record(principal, principal, "transcription.revise", [current.id, current.recording_id]);
  return { ...current, ...next, revision: number };
}

/** Edits made as one revision (none when nothing changes); the answer carries the transcript, so it is audited as a read too. */
async function correct(deps: ReviseDeps, principal: Principal, id: string, edits: IndexedEdit[], missing: (edit: IndexedEdit) => ApiError) {
  const corrected = deps.db.transaction(() => {
    const current = loadForCorrection(deps.db, principal, id);
    const { content, changes } = applyEdits(current, edits, missing);
    return changes.length === 0 ? current : commitRevision(deps, principal, current, content, changes);
  })();
  await deps.audit.access(principal, "transcription.read", [corrected.id, corrected.recording_id], disclosedIn(deps.db, principal, corrected));
  return corrected;
}

/** PATCH /transcriptions/{id}/segments/{index}. */
export function correctSegment(deps: ReviseDeps, principal: Principal, id: string, index: number, edit: SegmentEdit): Promise<Transcription> {
  return correct(deps, principal, id, [{ ...edit, index, param: "" }], () => {
    return new ApiError("not_found", `Transcription ${id} has no segment ${index}.`, { param: "index" });
  });
}

/** PATCH /transcriptions/{id}/segments: every edit, in order, as one revision; any refusal changes nothing. */
export function correctSegments(deps: ReviseDeps, principal: Principal, id: string, body: BulkEditBody): Promise<Transcription> {
  const edits = body.segments.map((e, n) => ({ ...e, param: `segments[${n}].` }));
  return correct(deps, principal, id, edits, (edit) => {
    return new ApiError("validation_error", `Transcription ${id} has no segment ${edit.index}.`, { param: `${edit.param}index` });
  });
}

/** POST /transcriptions/{id}/revisions {restore: N}: undo, as a new revision with revision N's content (nothing is erased). */
export async function restoreRevision(deps: ReviseDeps, principal: Principal, id: string, restore: number): Promise<Transcription> {
  const restored = deps.db.transaction(() => {
    const current = loadForCorrection(deps.db, principal, id);
    const earlier = restore < current.revision ? findRevision(deps.db, principal, id, restore) : null;
    if (!earlier) {
      throw new ApiError("validation_error", `Restore names an earlier revision of ${id}: 0 to ${current.revision - 1} (its latest is ${current.revision}).`, {
        param: "restore",
      });
    }
    return commitRevision(deps, principal, current, earlier.content, differences(current, earlier.content), restore);
  })();
  await deps.audit.access(principal, "transcription.read", [restored.id, restored.recording_id], disclosedIn(deps.db, principal, restored));
  return restored;
}

/** Every revision's record, newest first; an uncorrected transcription has its original, revision 0, alone. */
export function revisionsOf(db: Database, tenant: Tenant, transcription: Transcription): Revision[] {
  const kept = listRevisionRows(db, tenant, transcription.id);
  if (kept.length > 0) return kept.reverse();
  if (transcription.status !== "completed") return [];
  const at = transcription.completed_at ?? transcription.created_at;
  return [{ transcription_id: transcription.id, revision: 0, author: null, changes: [], restored_from: null, created_at: at }];
}

/** GET /transcriptions/{id}/revisions: what changed, by whom and when; the changes quote the transcript, so it is audited as a read. */
export async function listRevisions(deps: Pick<Deps, "db" | "audit">, principal: Principal, id: string): Promise<Page<Revision>> {
  const transcription = findVisibleTranscription(deps.db, principal, id);
  const data = revisionsOf(deps.db, principal, transcription);
  await deps.audit.access(principal, "transcription.read", [transcription.id, transcription.recording_id], disclosedIn(deps.db, principal, transcription));
  return { data, has_more: false, total: data.length };
}
