import type { Mode } from "../tenancy";

/** The tenant a job works for, as it is stored in the job's JSON payload. */
export type TenantJob = { project_id: string; mode: Mode };

/**
 * Every job the queue runs, by name, with its payload: the contract between the module
 * that enqueues and the module that handles. `JobQueue.enqueue` and `register` are typed
 * by this table, so a misspelt name or a wrong payload is a compile error, and a module
 * hands work to another by naming a job here instead of importing it (decision 083).
 * Payloads are JSON: ids and small values, never rows, read again by the handler.
 */
export type JobContracts = {
  /** Recordings, after a completed upload: checks size and checksum, then decides the next step. */
  "recordings.verify_upload": TenantJob & { recording_id: string };
  /** Recordings: removes objects a committed change stopped referring to. */
  "recordings.delete_objects": { keys?: string[]; prefix?: string };
  /** Enqueued by recordings when an upload is verified; transcriptions decides from the configuration. */
  "transcriptions.auto": TenantJob & { recording_id: string };
  /** Transcriptions: runs the model on a transcription in status processing. */
  "transcriptions.run": TenantJob & { transcription_id: string };
  /**
   * Transcriptions, when one completes and the local LLM is installed: redaction's model pass
   * (decision 108); with `announce`, transcription.completed and the summary wait for it.
   */
  "transcriptions.redaction_pass": TenantJob & { transcription_id: string; announce: boolean };
  /**
   * Enqueued by transcriptions when a transcription completes and the configuration asks for
   * a summary; summaries starts it with `template` (checked again there: a value stored before
   * the configuration checked template names falls back to general).
   */
  "summaries.auto": TenantJob & { transcription_id: string; template: string };
  /** Summaries: runs the model for one run of a summary. */
  "summaries.run": TenantJob & { summary_id: string; run: number };
  /** Enqueued by transcriptions when a transcription completes: search chunks and embeds it. */
  "search.index_transcription": TenantJob & { transcription_id: string };
  /** Search: embeds every chunk lacking a vector of the current index generation. */
  "search.reindex": Record<string, never>;
  /** Search: builds (or rebuilds) the cell index of one end user's large library (decision 192). */
  "search.build_cells": TenantJob & { end_user_id: string };
  /** Empties the WAL after an erasure (decision 078). */
  "db.truncate_wal": Record<string, never>;
  /** Storage: seals audio objects written before encryption at rest, in key order after `after` (decision 107). */
  "storage.seal_plaintext": { after: string | null; busy: number; failed: number };
  /** Enqueued by recordings when a streaming recording's chunk is stored: live starts its transcription (issue 30). */
  "live.chunk_received": TenantJob & { recording_id: string; chunk_index: number };
  /** Live: transcribes the speech regions closed in the chunks received so far. */
  "live.transcribe": TenantJob & { transcription_id: string };
  /** Enqueued by recordings when a streaming upload fails verification: live discards its provisional transcript. */
  "live.verification_failed": TenantJob & { recording_id: string };
  /** Exports: builds an eDiscovery archive into storage. */
  "exports.build": TenantJob & { export_id: string };
};

export type JobName = keyof JobContracts;
export type JobPayload<N extends JobName> = JobContracts[N];

/** Every job name at run time (a test checks each has a handler); `satisfies` keeps it complete. */
export const JOB_NAMES = Object.keys({
  "recordings.verify_upload": true,
  "recordings.delete_objects": true,
  "transcriptions.auto": true,
  "transcriptions.run": true,
  "transcriptions.redaction_pass": true,
  "summaries.auto": true,
  "summaries.run": true,
  "search.index_transcription": true,
  "search.reindex": true,
  "search.build_cells": true,
  "db.truncate_wal": true,
  "exports.build": true,
  "live.chunk_received": true,
  "live.transcribe": true,
  "live.verification_failed": true,
  "storage.seal_plaintext": true,
} satisfies Record<JobName, true>) as JobName[];
