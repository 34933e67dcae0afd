import type { z } from "zod";
import type { Deps } from "../../deps";
import { authorize, type Principal } from "../../http/auth";
import { bodyField, confineToEndUser } from "../../http/access";
import { ApiError } from "../../http/errors";
import { createSession } from "../ask/service";
import { loadRecording, listRecordings } from "../recordings/service";
import { searchRecordings } from "../search/service";
import { getSummary, listSummaryRows } from "../summaries/service";
import { getTranscription, latestCompletedTranscription } from "../transcriptions/service";
import {
  type askInput,
  type askOutput,
  type listRecordingsInput,
  type listRecordingsOutput,
  type searchInput,
  type searchOutput,
  type summaryInput,
  type summaryOutput,
  TRANSCRIPT_PAGE_CHARS,
  type transcriptInput,
  type transcriptOutput,
} from "./schema";

/**
 * What each MCP tool does, as calls to the services the API's routes call with the same
 * Principal: the access rule, the scopes and the audit of content reads apply unchanged.
 * The Principal here is already confined to one end user (routes.ts), so every search,
 * list and read is that end user's alone.
 */

type Args<Shape extends z.ZodRawShape> = z.infer<z.ZodObject<Shape>>;

export async function searchConversations(deps: Deps, principal: Principal, args: Args<typeof searchInput>): Promise<Args<typeof searchOutput>> {
  const { results } = await searchRecordings(deps, authorize(principal, "recordings:read"), { ...args, end_user_id: undefined });
  return {
    results: results.map((r) => ({
      recording_id: r.recording_id,
      speaker: r.speaker,
      start_ms: r.start_ms,
      end_ms: r.end_ms,
      recorded_at: r.recorded_at,
      text: r.chunk_text,
      score: r.score,
    })),
  };
}

export async function askQuestion(deps: Deps, principal: Principal, args: Args<typeof askInput>): Promise<Args<typeof askOutput>> {
  const scope = args.recording_ids ? { type: "selected" as const, recording_ids: args.recording_ids } : { type: "library" as const };
  const result = await createSession(deps, authorize(principal, "ask:write"), { scope, initial_message: { content: args.question } });
  // With an initial message the service answers with the Ask result, never a bare session.
  if (!("message" in result)) throw new ApiError("internal_error", "Ask answered without a message.");
  const citations = result.message.parts.flatMap((p) =>
    p.type === "citation" ? [{ recording_id: p.recording_id, start_ms: p.start_ms, speaker: p.speaker ?? null }] : [],
  );
  return { answer: result.message.content, citations, session_id: result.session_id };
}

/** The newest completed transcription of a recording the principal may see (404 as the API's for one it may not). */
async function transcriptOf(deps: Deps, principal: Principal, recordingId: string) {
  const recording = loadRecording(deps.db, principal, recordingId, bodyField("recording_id"));
  const latest = latestCompletedTranscription(deps.db, principal, recording.id);
  if (!latest) throw new ApiError("transcription_not_ready", `Recording ${recording.id} has no completed transcription yet.`);
  // Read again through the service so the read is audited as the API's GET is.
  return getTranscription(deps, principal, latest.id);
}

/**
 * A window of a transcript: the lines that start within [start_ms, end_ms), at most
 * TRANSCRIPT_PAGE_CHARS characters of text, and where the next page starts.
 */
export async function readTranscript(deps: Deps, principal: Principal, args: Args<typeof transcriptInput>): Promise<Args<typeof transcriptOutput>> {
  const transcription = await transcriptOf(deps, authorize(principal, "transcriptions:read"), args.recording_id);
  const names = new Map(transcription.speakers.map((s) => [s.id, s.label]));
  const from = args.start_ms ?? 0;
  const to = args.end_ms ?? Number.POSITIVE_INFINITY;
  const inRange = transcription.segments
    .map((s) => ({ start_ms: Math.round(s.start * 1000), end_ms: Math.round(s.end * 1000), speaker: names.get(s.speaker) ?? s.speaker, text: s.text.trim() }))
    .filter((l) => l.end_ms > from && l.start_ms < to);
  const lines: typeof inRange = [];
  let used = 0;
  for (const l of inRange) {
    // The first line always fits, so a page never comes back empty while text remains.
    if (lines.length > 0 && used + l.text.length > TRANSCRIPT_PAGE_CHARS) break;
    lines.push(l);
    used += l.text.length;
  }
  const next = inRange[lines.length];
  return { recording_id: transcription.recording_id, speakers: [...new Set(names.values())], lines, next_start_ms: next ? next.start_ms : null };
}

/** The whole transcript as plain text, a line per segment led by its time and speaker (the resource's rendering). */
export async function transcriptText(deps: Deps, principal: Principal, recordingId: string): Promise<string> {
  const transcription = await transcriptOf(deps, authorize(principal, "transcriptions:read"), recordingId);
  const names = new Map(transcription.speakers.map((s) => [s.id, s.label]));
  return transcription.segments.map((s) => `[${clock(s.start)}] ${names.get(s.speaker) ?? s.speaker}: ${s.text.trim()}`).join("\n");
}

/** m:ss or h:mm:ss, as people read a moment. */
export function clock(seconds: number): string {
  const total = Math.floor(seconds);
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  const ss = String(s).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

export function listConversations(deps: Deps, principal: Principal, args: Args<typeof listRecordingsInput>): Args<typeof listRecordingsOutput> {
  const page = listRecordings(deps.db, authorize(principal, "recordings:read"), args);
  return {
    recordings: page.data.map((r) => ({
      recording_id: r.id,
      name: r.name,
      recorded_at: r.recorded_at,
      duration_seconds: r.duration_seconds,
      status: r.status,
    })),
    next_cursor: page.next_cursor ?? null,
  };
}

/** The newest completed summary of a recording's current transcript. */
export async function summaryOf(deps: Deps, principal: Principal, args: Args<typeof summaryInput>): Promise<Args<typeof summaryOutput>> {
  const reader = authorize(principal, "summaries:read");
  const recording = loadRecording(deps.db, reader, args.recording_id, bodyField("recording_id"));
  const transcription = latestCompletedTranscription(deps.db, reader, recording.id);
  const summaries = transcription
    ? listSummaryRows(deps.db, reader, { transcriptionId: transcription.id, endUserId: confineToEndUser(reader) }, { limit: 20 }).data
    : [];
  const newest = summaries.find((s) => s.status === "completed");
  if (!newest) throw new ApiError("not_found", `Recording ${recording.id} has no completed summary yet.`, { param: "recording_id" });
  const summary = await getSummary(deps, reader, newest.id);
  return { recording_id: summary.recording_id, summary_id: summary.id, template: summary.template, text: summary.text ?? "" };
}
