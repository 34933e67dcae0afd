import { ApiError } from "../../http/errors";
import type { RevisionContent } from "./revisions-store";
import type { Change, SegmentEdit } from "./revisions-schema";
import type { Speaker, Transcription } from "./schema";
import { defaultLabel } from "./speaker-assignment";
import { withText } from "./words";

/** Ids the diarizer gives; a new name may not look like one, or it could not be told from an unnamed speaker. */
export const SPEAKER_ID = /^SPEAKER_\d+$/;

/** What a speaker's segments carry: the name once named, else the id. */
export const shownName = (s: Speaker) => (s.label === defaultLabel(s.id) ? s.id : s.label);

/** An edit and where it came from, so a refusal names the right parameter. */
export type IndexedEdit = SegmentEdit & { index: number; param: string };

type Draft = { segments: Transcription["segments"]; speakers: Speaker[]; changes: Change[] };

const findSpeaker = (speakers: Speaker[], name: string) => speakers.find((s) => s.id === name || s.label === name || shownName(s) === name);

/** A speaker for a name no speaker has: the next free SPEAKER_n, labelled with the name. */
function newSpeaker(draft: Draft, name: string, param: string): Speaker {
  if (SPEAKER_ID.test(name)) throw new ApiError("validation_error", `The transcription has no speaker ${name}.`, { param });
  const n = Math.max(0, ...draft.speakers.map((s) => Number(s.id.match(/^SPEAKER_(\d+)$/)?.[1] ?? 0))) + 1;
  const speaker = { id: `SPEAKER_${n}`, label: name };
  draft.speakers.push(speaker);
  return speaker;
}

function setSegmentSpeaker(draft: Draft, index: number, to: string): void {
  const segment = draft.segments[index]!;
  if (segment.speaker === to) return;
  draft.changes.push({ segment: index, field: "speaker", from: segment.speaker, to });
  segment.speaker = to;
}

/**
 * The whole voice: every segment of this segment's speaker goes to the named speaker when
 * one has the name (two voices the diarizer split become one), else the speaker is renamed
 * (and loses the known voice it was matched to, as naming does).
 */
function renameVoice(draft: Draft, edit: IndexedEdit, name: string): void {
  const from = draft.segments[edit.index]!.speaker;
  const source = draft.speakers.find((s) => shownName(s) === from);
  const target = findSpeaker(draft.speakers, name);
  if (!source || target) {
    const to = target ? shownName(target) : shownName(newSpeaker(draft, name, `${edit.param}speaker`));
    draft.segments.forEach((s, i) => s.speaker === from && setSegmentSpeaker(draft, i, to));
    return;
  }
  if (SPEAKER_ID.test(name)) throw new ApiError("validation_error", `The transcription has no speaker ${name}.`, { param: `${edit.param}speaker` });
  draft.changes.push({ speaker_id: source.id, field: "label", from: source.label, to: name });
  const index = draft.speakers.indexOf(source);
  const { voice_id: _, score: __, ...rest } = source;
  draft.speakers[index] = { ...rest, label: name };
  draft.segments.forEach((s, i) => s.speaker === from && setSegmentSpeaker(draft, i, name));
}

/**
 * The content after `edits`, in order, and what each changed; an edit that changes nothing
 * records nothing. A segment index the transcription lacks is refused by `missing`.
 */
export function applyEdits(t: Transcription, edits: IndexedEdit[], missing: (edit: IndexedEdit) => ApiError): { content: RevisionContent; changes: Change[] } {
  const draft: Draft = { segments: t.segments.map((s) => ({ ...s })), speakers: t.speakers.map((s) => ({ ...s })), changes: [] };
  for (const edit of edits) {
    const segment = draft.segments[edit.index];
    if (!segment) throw missing(edit);
    if (edit.text !== undefined && edit.text !== segment.text) {
      draft.changes.push({ segment: edit.index, field: "text", from: segment.text, to: edit.text });
      draft.segments[edit.index] = withText(segment, edit.text);
    }
    if (edit.speaker === undefined) continue;
    if (edit.apply_to === "speaker") renameVoice(draft, edit, edit.speaker);
    else {
      const target = findSpeaker(draft.speakers, edit.speaker) ?? newSpeaker(draft, edit.speaker, `${edit.param}speaker`);
      setSegmentSpeaker(draft, edit.index, shownName(target));
    }
  }
  return { content: contentOf(draft), changes: draft.changes };
}

/** The transcript's text is its segments' words, as the pipeline joins them. */
export const contentOf = (c: Pick<Draft, "segments" | "speakers">): RevisionContent => ({
  text: c.segments.map((s) => s.text).join(" "),
  segments: c.segments,
  speakers: c.speakers,
});

/** What going from `from` to `to` changes (an undo's record): segments' text and speaker, speakers' names. */
export function differences(from: RevisionContent, to: RevisionContent): Change[] {
  const changes: Change[] = [];
  to.segments.forEach((s, i) => {
    const before = from.segments[i];
    if (before && before.text !== s.text) changes.push({ segment: i, field: "text", from: before.text, to: s.text });
    if (before && before.speaker !== s.speaker) changes.push({ segment: i, field: "speaker", from: before.speaker, to: s.speaker });
  });
  for (const s of to.speakers) {
    const before = from.speakers.find((b) => b.id === s.id);
    if (before && before.label !== s.label) changes.push({ speaker_id: s.id, field: "label", from: before.label, to: s.label });
  }
  return changes;
}
