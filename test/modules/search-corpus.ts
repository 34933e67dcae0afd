import type { Deps } from "../../src/deps";
import type { Tenant } from "../../src/tenancy";
import { newId } from "../../src/ids";
import { INDEX_TRANSCRIPTION_JOB } from "../../src/modules/search/indexer";
import { insertRecording } from "../../src/modules/recordings/store";
import { insertTranscription, markTranscriptionCompleted } from "../../src/modules/transcriptions/store";

export type Line = [start: number, end: number, speaker: string, text: string];

/**
 * Seeds a recording and a completed transcription through the recordings and pipeline
 * stores, and queues the indexing job exactly as the pipeline does on completion
 * (contract 4); the caller drains the queue. Whisper is too big for CI, so this stands
 * in for the audio -> transcript step only.
 */
export function seedTranscript(
  deps: Deps,
  tenant: Tenant,
  o: { endUserId: string | null; recordedAt: string | null; lines: Line[]; recordingId?: string; name?: string },
) {
  const now = deps.clock.now().toISOString();
  const recordingId = o.recordingId ?? seedRecording(deps, tenant, o);
  const transcriptionId = newId("txn_");
  const segments = o.lines.map(([start, end, speaker, text]) => ({ start, end, speaker, text, confidence: 0.9 }));
  deps.db.transaction(() => {
    insertTranscription(
      deps.db,
      tenant,
      {
        id: transcriptionId,
        recording_id: recordingId,
        status: "processing",
        language: null,
        text: null,
        duration_seconds: null,
        segments: [],
        speakers: [],
        speaker_turns: [],
        error: null,
        model: null,
        diarization: null,
        revision: 0,
        created_at: now,
        started_at: now,
        completed_at: null,
        failed_at: null,
      },
      { endUserId: o.endUserId, requestedLanguage: null, requestedSpeakers: {} },
    );
    markTranscriptionCompleted(deps.db, tenant, transcriptionId, {
      language: "en",
      text: segments.map((s) => s.text).join(" "),
      duration_seconds: segments.at(-1)?.end ?? 0,
      segments,
      speakers: [...new Set(segments.map((s) => s.speaker))].map((id) => ({ id, label: id })),
      speaker_turns: [],
      model: "test",
      model_sha256: null,
      diarization: "none",
      completed_at: now,
    });
    deps.queue.enqueue(INDEX_TRANSCRIPTION_JOB, { project_id: tenant.projectId, mode: tenant.mode, transcription_id: transcriptionId });
  })();
  return { recordingId, transcriptionId };
}

/** A recording entry (no transcription) through the recordings store. */
export function seedRecording(deps: Deps, tenant: Tenant, o: { endUserId: string | null; recordedAt: string | null; name?: string }): string {
  const now = deps.clock.now().toISOString();
  const id = newId("rec_");
  insertRecording(deps.db, tenant, {
    id,
    end_user_id: o.endUserId,
    device_id: null,
    name: o.name ?? null,
    status: "uploaded",
    duration_seconds: null,
    file_size_bytes: null,
    recorded_at: o.recordedAt,
    metadata: {},
    upload_method: null,
    source: "api_upload",
    mime_type: "audio/wav",
    is_streaming: false,
    chunk_count: 0,
    consent_obtained: true,
    format: "wav",
    codec: null,
    sha256: null,
    error: null,
    uploaded_at: now,
    created_at: now,
    updated_at: now,
  });
  return id;
}

/** A small hand-written corpus: three conversations of one person on distinct topics. */
export const BUDGET: Line[] = [
  [0, 12, "SPEAKER_1", "Thanks everyone for joining the quarterly planning call."],
  [12, 31, "SPEAKER_2", "The marketing budget for next quarter is forty thousand dollars, approved by finance."],
  [31, 52, "SPEAKER_1", "Good, then we can hire a contractor for the website redesign."],
  [52, 75, "SPEAKER_2", "The launch date moves to March because the vendor is late."],
  [75, 96, "SPEAKER_1", "Let's review the hiring plan again next Tuesday."],
];
export const DOCTOR: Line[] = [
  [0, 15, "SPEAKER_1", "The doctor said my blood pressure is a bit high."],
  [15, 40, "SPEAKER_2", "You should reduce salt, walk every day and take the medication each morning."],
  [40, 70, "SPEAKER_2", "We will check your blood pressure again in six weeks."],
];
export const HIKING: Line[] = [
  [0, 20, "SPEAKER_1", "Let's go hiking in the mountains on Saturday."],
  [20, 45, "SPEAKER_2", "Bring water, good boots and a rain jacket, the weather can turn fast."],
  [45, 70, "SPEAKER_1", "We meet at the trailhead parking lot at seven."],
];
