import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import { bodyField, confineToEndUser, notFound, ownedBy, visible } from "../../http/access";
import type { Principal } from "../../http/auth";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import type { Tenant } from "../../tenancy";
import { loadEndUser } from "../end-users/service";
import { loadRecording } from "../recordings/service";
import type { AddSampleBody, CreateVoiceBody, ListVoicesQuery, UpdateVoiceBody, Voice } from "./schema";
import {
  deletePrintsOfRecording,
  deleteVoiceRow,
  deleteVoicesOfEndUser,
  findVoice,
  findVoiceByName,
  insertVoice,
  insertVoiceprint,
  listVoiceRows,
  updateVoiceRow,
} from "./store";

/** What transcriptions use of the voices store: through this service, never the store itself (decision 083). */
export { voicesWithPrints as knownVoices } from "./store";

/** The end user a voice is linked to: an end-user-scoped key links its own; the end user must exist. */
function linkedEndUser(db: Database, principal: Principal, endUserId: string | null | undefined): string | null {
  const id = confineToEndUser(principal, endUserId);
  return id && loadEndUser(db, principal, id, bodyField("end_user_id")).id;
}

export function createVoice(db: Database, principal: Principal, body: CreateVoiceBody, now: Date): Voice {
  const at = now.toISOString();
  return db.transaction(() => {
    const voice: Voice = {
      id: newId("vox_", now.getTime()),
      name: body.name,
      end_user_id: linkedEndUser(db, principal, body.end_user_id),
      sample_count: 0,
      created_at: at,
      updated_at: at,
    };
    insertVoice(db, principal, voice);
    return voice;
  })();
}

/** A voice the caller may see (end-user-scoped keys: only their end user's). */
export function getVoice(db: Database, principal: Principal, id: string): Voice {
  return visible(principal, findVoice(db, principal, id), (v) => ownedBy(v.end_user_id), notFound.voice(id));
}

export function listVoices(db: Database, principal: Principal, query: ListVoicesQuery): Page<Voice> {
  return listVoiceRows(db, principal, confineToEndUser(principal, query.end_user_id) ?? undefined, { limit: query.limit, cursor: query.cursor });
}

export function updateVoice(db: Database, principal: Principal, id: string, body: UpdateVoiceBody, now: Date): Voice {
  return db.transaction(() => {
    const voice = getVoice(db, principal, id);
    const updated: Voice = {
      ...voice,
      name: body.name ?? voice.name,
      end_user_id: body.end_user_id === undefined ? voice.end_user_id : linkedEndUser(db, principal, body.end_user_id),
      updated_at: now.toISOString(),
    };
    updateVoiceRow(db, principal, updated);
    return updated;
  })();
}

/** The voice and every voiceprint of it. */
export function deleteVoice(db: Database, principal: Principal, id: string): void {
  db.transaction(() => {
    getVoice(db, principal, id);
    deleteVoiceRow(db, principal, id);
  })();
}

/** Recording statuses with verified audio (spec 3.3), as transcriptions has them. */
const VERIFIED_AUDIO = new Set(["uploaded", "processing", "completed", "failed"]);

type Print = { kind: string; print: number[]; recordingId: string; startMs: number; endMs: number };

/** Adds a voiceprint to a voice. */
export function addVoiceprint(db: Database, tenant: Tenant, voice: Voice, print: Print, now: Date): Voice {
  const at = now.toISOString();
  insertVoiceprint(db, voice.id, { ...print, at });
  const updated = { ...voice, sample_count: voice.sample_count + 1, updated_at: at };
  updateVoiceRow(db, tenant, updated);
  return updated;
}

/** PATCH .../speakers with remember: the voice of this name (and end user), made if new, with one more print. */
export function rememberVoice(db: Database, tenant: Tenant, voice: { name: string; endUserId: string | null }, print: Print, now: Date): Voice {
  const at = now.toISOString();
  let known = findVoiceByName(db, tenant, voice.name, voice.endUserId);
  if (!known) {
    known = { id: newId("vox_", now.getTime()), name: voice.name, end_user_id: voice.endUserId, sample_count: 0, created_at: at, updated_at: at };
    insertVoice(db, tenant, known);
  }
  return addVoiceprint(db, tenant, known, print, now);
}

/**
 * POST /voices/{id}/samples: a voiceprint of the speech from start_ms to end_ms of a
 * recording, by the diarizer in use. The span should hold only this voice.
 */
export async function addSample(
  deps: Pick<Deps, "db" | "storage" | "engines">,
  principal: Principal,
  id: string,
  body: AddSampleBody,
  now: Date,
): Promise<Voice> {
  const { db } = deps;
  getVoice(db, principal, id);
  const recording = loadRecording(db, principal, body.recording_id, bodyField("recording_id"));
  const printer = deps.engines.diarizer.voiceprints;
  if (!printer) throw new ApiError("resource_conflict", `The diarizer in use (${deps.engines.diarizer.kind}) keeps no voiceprints.`);
  if (!recording.storage_key || !VERIFIED_AUDIO.has(recording.status))
    throw new ApiError("resource_conflict", `Recording ${recording.id} has no uploaded audio yet.`, { param: "recording_id" });
  const key = recording.storage_key;
  const pcm = await deps.storage.withLocalFile(key, (path) => deps.engines.audio.decodePcm16k(path));
  const seconds = pcm.length / 16_000;
  if (body.end_ms / 1000 > seconds + 0.05)
    throw new ApiError("validation_error", `The recording lasts ${Math.round(seconds * 1000)} ms; end_ms is past its end.`, { param: "end_ms" });
  const print = await printer.voiceprint(pcm, [{ start: body.start_ms / 1000, end: body.end_ms / 1000 }]);
  if (!print) throw new ApiError("validation_error", "The span holds too little speech to tell a voice by (at least 2 s of it).", { param: "end_ms" });
  return db.transaction(() =>
    addVoiceprint(
      db,
      principal,
      getVoice(db, principal, id),
      { kind: deps.engines.diarizer.kind, print, recordingId: recording.id, startMs: body.start_ms, endMs: body.end_ms },
      now,
    ),
  )();
}

/** Erasure: a recording's prints go with it, an end user's voices with them (decision 098). */
export function registerVoiceCascades(deps: Pick<Deps, "db" | "cascades">): void {
  deps.cascades.on("recordingErased", "voices", ({ recording }) => deletePrintsOfRecording(deps.db, recording.id));
  deps.cascades.on("endUserDeleted", "voices", ({ tenant, endUserId }) => deleteVoicesOfEndUser(deps.db, tenant, endUserId));
}
