import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import type { NameSpeakersBody, Transcription } from "./schema";
import { getTranscription } from "./service";
import { defaultLabel } from "./speaker-assignment";
import { replaceTranscriptionSpeakers } from "./store";

/** Ids the diarizer gives; a name may not look like one, or it could not be told from an unnamed speaker. */
const SPEAKER_ID = /^SPEAKER_\d+$/;

/**
 * PATCH /transcriptions/{id}/speakers: names speakers of a finished transcription. The
 * speakers list keeps the ids (SPEAKER_n, the keys of this body) with the name as label;
 * the segments' speaker becomes the name, and the recording is indexed again so search
 * results and Ask citations carry it. speaker_turns keep the diarizer's ids.
 */
export function nameSpeakers(deps: Pick<Deps, "db" | "queue">, principal: Principal, id: string, body: NameSpeakersBody): Transcription {
  const { db } = deps;
  return db.transaction(() => {
    const transcription = getTranscription(db, principal, id);
    if (transcription.status !== "completed") {
      throw new ApiError("transcription_not_ready", `Transcription ${id} is ${transcription.status}; its speakers can be named once it has completed.`);
    }
    const shown = (s: Transcription["speakers"][number]) => (s.label === defaultLabel(s.id) ? s.id : s.label);
    const renamed = new Map<string, string>();
    for (const [speakerId, { name }] of Object.entries(body)) {
      const speaker = transcription.speakers.find((s) => s.id === speakerId);
      if (!speaker) throw new ApiError("validation_error", `Transcription ${id} has no speaker ${speakerId}; its speakers are ${transcription.speakers.map((s) => s.id).join(", ")}.`, { param: speakerId });
      if (SPEAKER_ID.test(name)) throw new ApiError("validation_error", `A speaker's name cannot look like a speaker id (${name}).`, { param: `${speakerId}.name` });
      const taken = transcription.speakers.find((s) => s.id !== speakerId && !body[s.id] && shown(s) === name);
      if (taken) throw new ApiError("validation_error", `${name} already names ${taken.id} of this transcription.`, { param: `${speakerId}.name` });
      renamed.set(shown(speaker), name);
    }
    const speakers = transcription.speakers.map((s) => (body[s.id] ? { ...s, label: body[s.id]!.name } : s));
    const segments = transcription.segments.map((s) => ({ ...s, speaker: renamed.get(s.speaker) ?? s.speaker }));
    replaceTranscriptionSpeakers(db, principal, id, segments, speakers);
    const payload = { project_id: principal.projectId, mode: principal.mode, transcription_id: id };
    deps.queue.enqueue("search.index_transcription", payload, { dedupeKey: `search.index_transcription:${id}` });
    return { ...transcription, segments, speakers };
  })();
}
