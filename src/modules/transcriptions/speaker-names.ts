import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import { endUsersOfRecordings, findRecording } from "../recordings/service";
import { rememberVoice } from "../voices/service";
import type { NameSpeakersBody, Transcription } from "./schema";
import { differences, SPEAKER_ID, shownName } from "./corrections";
import { commitRevision, loadForCorrection } from "./revisions";

type NamingDeps = Pick<Deps, "db" | "queue" | "storage" | "engines" | "clock" | "audit">;

/** The completed transcription, with every name in the body checked against its speakers. */
function loadForNaming(deps: NamingDeps, principal: Principal, id: string, body: NameSpeakersBody): Transcription {
  const transcription = loadForCorrection(deps.db, principal, id);
  for (const [speakerId, { name }] of Object.entries(body)) {
    if (!transcription.speakers.some((s) => s.id === speakerId)) {
      throw new ApiError(
        "validation_error",
        `Transcription ${id} has no speaker ${speakerId}; its speakers are ${transcription.speakers.map((s) => s.id).join(", ")}.`,
        { param: speakerId },
      );
    }
    if (SPEAKER_ID.test(name))
      throw new ApiError("validation_error", `A speaker's name cannot look like a speaker id (${name}).`, { param: `${speakerId}.name` });
    const taken = transcription.speakers.find((s) => s.id !== speakerId && !body[s.id] && shownName(s) === name);
    if (taken) throw new ApiError("validation_error", `${name} already names ${taken.id} of this transcription.`, { param: `${speakerId}.name` });
  }
  return transcription;
}

/** The voiceprints of the speakers to remember, over all of their turns in the recording's audio. */
async function printsToRemember(deps: NamingDeps, principal: Principal, transcription: Transcription, body: NameSpeakersBody): Promise<Map<string, number[]>> {
  const remembered = Object.keys(body).filter((speakerId) => body[speakerId]!.remember);
  if (remembered.length === 0) return new Map();
  const printer = deps.engines.diarizer.voiceprints;
  if (!printer)
    throw new ApiError("resource_conflict", `The diarizer in use (${deps.engines.diarizer.kind}) keeps no voiceprints; name the speakers without remember.`);
  const key = findRecording(deps.db, principal, transcription.recording_id)?.storage_key;
  if (!key) throw new ApiError("resource_conflict", `The audio of recording ${transcription.recording_id} is gone; name the speakers without remember.`);
  const pcm = await deps.storage.withLocalFile(key, (path) => deps.engines.audio.decodePcm16k(path));
  const prints = new Map<string, number[]>();
  for (const speakerId of remembered) {
    const print = await printer.voiceprint(
      pcm,
      transcription.speaker_turns.filter((t) => t.speaker === speakerId),
    );
    if (!print) throw new ApiError("validation_error", `${speakerId} speaks too little (under 2 s) to remember the voice.`, { param: `${speakerId}.remember` });
    prints.set(speakerId, print);
  }
  return prints;
}

/**
 * PATCH /transcriptions/{id}/speakers: names speakers of a finished transcription, as a new
 * revision (decision 154; refused under a legal hold like any correction). The
 * speakers list keeps the ids (SPEAKER_n, the keys of this body) with the name as label;
 * the segments' speaker becomes the name, and the recording is indexed again so search
 * results and Ask citations carry it. speaker_turns keep the diarizer's ids. With
 * remember, the speaker's voiceprint goes to the known voice of that name (decision 098).
 */
export async function nameSpeakers(deps: NamingDeps, principal: Principal, id: string, body: NameSpeakersBody): Promise<Transcription> {
  const prints = await printsToRemember(deps, principal, loadForNaming(deps, principal, id, body), body);
  const { db } = deps;
  const now = deps.clock.now();
  const named = db.transaction(() => {
    // Again inside the transaction: the transcription may have changed while the audio was decoded.
    const transcription = loadForNaming(deps, principal, id, body);
    const renamed = new Map<string, string>();
    const voiceIds = new Map<string, string>();
    for (const [speakerId, { name }] of Object.entries(body)) {
      renamed.set(shownName(transcription.speakers.find((s) => s.id === speakerId)!), name);
      const print = prints.get(speakerId);
      if (!print) continue;
      const turns = transcription.speaker_turns.filter((t) => t.speaker === speakerId);
      const span = { recordingId: transcription.recording_id, startMs: Math.round(turns[0]!.start * 1000), endMs: Math.round(turns.at(-1)!.end * 1000) };
      voiceIds.set(speakerId, rememberVoice(db, principal, { name, endUserId: null }, { kind: deps.engines.diarizer.kind, print, ...span }, now).id);
    }
    const speakers = transcription.speakers.map((s) => {
      if (!body[s.id]) return s;
      const { voice_id: _, score: __, ...rest } = s;
      const voiceId = voiceIds.get(s.id);
      return { ...rest, label: body[s.id]!.name, ...(voiceId ? { voice_id: voiceId } : {}) };
    });
    const segments = transcription.segments.map((s) => ({ ...s, speaker: renamed.get(s.speaker) ?? s.speaker }));
    const next = { text: transcription.text, segments, speakers };
    return commitRevision(deps, principal, transcription, next, differences(transcription, next));
  })();
  // The answer carries the transcript: a read like any other.
  await deps.audit.access(principal, "transcription.read", [named.id, named.recording_id], {
    endUsers: endUsersOfRecordings(deps.db, principal, [named.recording_id]),
  });
  return named;
}
