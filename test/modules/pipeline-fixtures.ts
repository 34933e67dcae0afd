import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Deps } from "../../src/deps";
import type { Tenant } from "../../src/tenancy";
import { newId } from "../../src/ids";
import { concatSamples } from "../../src/engines/pcm-spans";
import type { RecordingStatus } from "../../src/modules/recordings/schema";
import { insertRecording } from "../../src/modules/recordings/store";
import { makeTempDir } from "../helpers";
import { voicedBurst, wavBytes } from "../engines/signals";
import { FIXTURES } from "./recordings-support";

// The engine tests' signal helpers, re-exported so pipeline tests build audio one way.
export { silence, voicedBurst, wavBytes as wav } from "../engines/signals";

/** `seconds` of the speech-like signal Silero VAD (the real detector) scores as speech. */
export const voiced = (seconds: number): Float32Array => voicedBurst(seconds, 0, seconds);

/**
 * A WAV of `pcm` written to a temp file, named relative to the fixtures folder so the
 * recordings tests' upload helper (which takes a fixture name) uploads it.
 */
export function wavFixture(pcm: Float32Array, name = "speech.wav"): string {
  const path = join(makeTempDir(), name);
  writeFileSync(path, wavBytes(pcm));
  return relative(FIXTURES, path);
}

export const concat = (...parts: Float32Array[]): Float32Array => concatSamples(parts);

export type SeedOptions = { endUserId?: string | null; deviceId?: string | null; status?: RecordingStatus; error?: { code: string; message: string } };

/**
 * A recording whose upload is done: the row through the recordings store and the bytes
 * through deps.storage, as upload-complete leaves them (the upload path has its own tests).
 */
export async function seedRecording(deps: Deps, tenant: Tenant, bytes: Uint8Array | null, options: SeedOptions = {}): Promise<string> {
  const now = deps.clock.now();
  const at = now.toISOString();
  const id = newId("rec_", now.getTime());
  insertRecording(deps.db, tenant, {
    id,
    end_user_id: options.endUserId ?? null,
    device_id: options.deviceId ?? null,
    name: null,
    status: "pending",
    duration_seconds: null,
    file_size_bytes: null,
    recorded_at: null,
    metadata: {},
    upload_method: null,
    source: "api_upload",
    mime_type: "audio/wav",
    is_streaming: false,
    chunk_count: 0,
    consent_obtained: null,
    format: null,
    codec: null,
    sha256: null,
    error: null,
    uploaded_at: null,
    created_at: at,
    updated_at: at,
  });
  let storageKey: string | null = null;
  if (bytes) {
    storageKey = `${tenant.projectId}/${tenant.mode}/${id}/original`;
    await deps.storage.write(
      storageKey,
      (async function* () {
        yield bytes;
      })(),
    );
  }
  // A fixture puts the row straight into the state a test needs, as no API transition could.
  deps.db
    .query("UPDATE recordings SET status = ?, storage_key = ?, file_size_bytes = ?, error = ?, uploaded_at = ? WHERE id = ?")
    .run(
      options.status ?? (bytes ? "uploaded" : "pending"),
      storageKey,
      bytes?.length ?? null,
      options.error ? JSON.stringify(options.error) : null,
      bytes ? at : null,
      id,
    );
  return id;
}

/** The outbox rows of a type, oldest first, as webhooks would deliver them. */
export function eventsOf(deps: Deps, type: string): { id: string; type: string; data: any }[] {
  return deps.db
    .query<{ id: string; type: string; data: string }, [string]>("SELECT id, type, data FROM events WHERE type = ? ORDER BY created_at, id")
    .all(type)
    .map((e) => ({ ...e, data: JSON.parse(e.data) }));
}
