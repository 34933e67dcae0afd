import type { Database } from "bun:sqlite";
import type { Deps } from "../../deps";
import type { ChatMessage } from "../../engines/llm";
import { bodyField, confineToEndUser, notFound, ownedBy, visible } from "../../http/access";
import type { Principal } from "../../http/auth";
import type { Tenant } from "../../tenancy";
import { ApiError } from "../../http/errors";
import type { Page } from "../../http/pagination";
import { newId } from "../../ids";
import { resolveLoadedConfig } from "../config/service";
import { findRecording, loadRecording } from "../recordings/service";
import { DEFAULT_CHUNKING, chunkSegments } from "../search/chunking";
import type { SearchResult } from "../search/schema";
import { requireEndUser, retrieveChunks } from "../search/service";
import { latestCompletedTranscription } from "../transcriptions/service";
import { contentOf, type Passage, toParts } from "./answer";
import { type PreparedTurn, prepareTurn, runTurn } from "./providers";
import {
  type AskMessage,
  type AskProvider,
  type AskResult,
  type AskSession,
  type CreateSessionBody,
  type ListSessionsQuery,
  type MessageBody,
  TITLE_MAX,
} from "./schema";
import {
  appendMessage,
  conversation,
  deleteMessage,
  deleteRecordingSessions,
  deleteSessionRow,
  findSession,
  insertSession,
  listMessageRows,
  listSessionRows,
  recountSession,
  turnsDrawingOn,
} from "./store";

type AskDeps = Pick<Deps, "db" | "clock" | "config" | "engines" | "log" | "searchCounts" | "audit">;

/** Passages retrieved per turn for library and selected scopes. */
const RETRIEVED_PASSAGES = 8;

/** A session of the key's project and mode; end-user-scoped keys see only their own (others are simply not found). */
export function getSession(deps: Pick<Deps, "db">, principal: Principal, id: string): AskSession {
  return visible(principal, findSession(deps.db, principal, id), (s) => ownedBy(s.end_user_id), notFound.askSession(id));
}

const UNTITLED = "New chat";

/** The default title: the initial message's first characters, cut between code points (never inside an emoji), else "New chat". */
function defaultTitle(content: string | undefined): string {
  return [...(content ?? "").trim()].slice(0, TITLE_MAX).join("").trim() || UNTITLED;
}

/** A session deleted while its turn ran is not found, as it would be for any later request. */
const sessionGone = (id: string) => new ApiError("not_found", `Ask session ${id} was deleted while it was being answered.`);

function newSession(deps: AskDeps, principal: Principal, body: CreateSessionBody): AskSession {
  const { scope } = body;
  let endUserId: string | null;
  let recordingIds: string[] = [];
  let recordingTitle: string | null = null;
  // A confined key naming another end user is refused whatever the scope (decision 131).
  confineToEndUser(principal, body.end_user_id);
  if (scope.type === "recording") {
    // The end user of a recording-scoped session is the recording's owner (spec 4.5).
    const recording = loadRecording(deps.db, principal, scope.recording_id, bodyField("scope.recording_id"));
    endUserId = recording.end_user_id;
    recordingIds = [recording.id];
    recordingTitle = recording.name;
  } else {
    endUserId = requireEndUser(deps.db, principal, body.end_user_id);
    if (scope.type === "selected") {
      recordingIds = [...new Set(scope.recording_ids)];
      for (const id of recordingIds) {
        if (loadRecording(deps.db, principal, id, bodyField("scope.recording_ids")).end_user_id !== endUserId) {
          throw new ApiError("resource_not_found", `No recording ${id} of end user ${endUserId}.`, { param: "scope.recording_ids" });
        }
      }
    }
  }
  const now = deps.clock.now();
  return {
    id: newId("as_", now.getTime()),
    end_user_id: endUserId,
    scope: { type: scope.type, recording_ids: recordingIds, recording_title: recordingTitle },
    title: body.title ?? defaultTitle(body.initial_message?.content),
    message_count: 0,
    last_message_at: null,
    last_model: null,
    last_provider: null,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  };
}

/**
 * POST /ask/sessions. With an initial message the first turn runs at once; if it is refused
 * (409, 413, 4xx) the session is not kept, but after a 502 it is, so the caller can retry
 * against it: its id is in the Location header and the error message, since the error
 * body keeps spec 7's shape (decision 065).
 */
export async function createSession(deps: AskDeps, principal: Principal, body: CreateSessionBody): Promise<AskSession | AskResult> {
  const session = newSession(deps, principal, body);
  insertSession(deps.db, principal, session);
  if (!body.initial_message) return session;
  try {
    return await askInSession(deps, principal, session, body.initial_message);
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) deleteSessionRow(deps.db, principal, session.id);
    throw err;
  }
}

/** What the model reads for this session's scope: the whole transcript, or retrieved passages. */
async function gatherPassages(
  deps: AskDeps,
  tenant: Tenant,
  session: AskSession,
  query: string,
): Promise<{ passages: Passage[]; sources: SearchResult[]; read: string[] }> {
  if (session.scope.type === "recording") {
    const recordingId = session.scope.recording_ids[0]!;
    if (!findRecording(deps.db, tenant, recordingId)) throw new ApiError("resource_not_found", `The session's recording ${recordingId} was deleted.`);
    const transcription = latestCompletedTranscription(deps.db, tenant, recordingId);
    if (!transcription) throw new ApiError("transcription_not_ready", `Recording ${recordingId} has no completed transcription yet.`);
    const chunks = chunkSegments(transcription.segments, { ...DEFAULT_CHUNKING, overlap: false });
    const passages = chunks.map((c, i) => ({ n: i + 1, recordingId, startMs: c.startMs, endMs: c.endMs, speaker: c.speaker, text: c.text }));
    return { passages, sources: [], read: [recordingId, transcription.id] };
  }
  const filter = { ...tenant, endUserId: session.end_user_id!, recordingIds: session.scope.type === "selected" ? session.scope.recording_ids : undefined };
  const sources = await retrieveChunks(deps, filter, query, RETRIEVED_PASSAGES);
  return {
    passages: sources.map((s, i) => ({ n: i + 1, recordingId: s.recording_id, startMs: s.start_ms, endMs: s.end_ms, speaker: s.speaker, text: s.chunk_text })),
    sources,
    read: [],
  };
}

/** Earlier turns as chat messages; a question left unanswered by a failed turn is skipped. */
function historyOf(messages: AskMessage[]): ChatMessage[] {
  return messages.flatMap((m, i) => (m.role === "assistant" || messages[i + 1]?.role === "assistant" ? [{ role: m.role, content: m.content }] : []));
}

async function askInSession(deps: AskDeps, principal: Principal, session: AskSession, body: MessageBody): Promise<AskResult> {
  const provider: AskProvider =
    body.provider ??
    (resolveLoadedConfig(deps.db, principal, { endUserId: session.end_user_id }).ask_provider as AskProvider | null) ??
    deps.config.ask.defaultProvider;
  const earlier = conversation(deps.db, principal, session.id);
  // A follow-up ("and when was that?") retrieves better with the previous question beside it.
  const previousQuestion = [...earlier].reverse().find((m) => m.role === "user")?.content ?? "";
  const { passages, sources, read: wholeTranscript } = await gatherPassages(deps, principal, session, `${body.content} ${previousQuestion}`.trim());
  // Refusals (413, an unconfigured provider) store nothing; a model that fails even to count
  // tokens is a model failure like any other, reported after the question is stored.
  let turn: PreparedTurn | ApiError;
  try {
    turn = await prepareTurn(deps, provider, {
      passages,
      history: historyOf(earlier),
      question: body.content,
      wholeTranscript: session.scope.type === "recording",
    });
  } catch (err) {
    if (!(err instanceof ApiError && err.status >= 500)) throw err;
    turn = err;
  }

  const asked = deps.clock.now().toISOString();
  const question: AskMessage = {
    id: newId("msg_", Date.parse(asked)),
    session_id: session.id,
    role: "user",
    content: body.content,
    parts: [{ type: "text", text: body.content }],
    tokens: null,
    model: null,
    provider: null,
    finish_reason: null,
    context_refs: body.context_refs ?? [],
    created_at: asked,
  };
  if (!appendMessage(deps.db, principal, question, [])) throw sessionGone(session.id);

  // Only what the model reads: prepareTurn may have dropped passages to fit its window (source i is passage i + 1).
  const read = new Set(turn instanceof ApiError ? [] : turn.passages.map((p) => p.n));
  const given = sources.filter((_, i) => read.has(i + 1));
  if (!(turn instanceof ApiError)) {
    // Audited before the model runs: a remote provider has the passages from then on, whatever it answers.
    await deps.audit.access(principal, "ask.context.read", [session.id, ...wholeTranscript, ...given.flatMap((s) => [s.chunk_id, s.recording_id])], {
      endUsers: [session.end_user_id],
    });
  }

  let answer: Awaited<ReturnType<typeof runTurn>>;
  try {
    if (turn instanceof ApiError) throw turn;
    answer = await runTurn(turn);
  } catch (err) {
    deps.log.warn("ask model failure", { session_id: session.id, provider, error: (err as Error).message });
    if (err instanceof ApiError) {
      throw new ApiError(err.code, `${err.message} The question is saved in session ${session.id}; retry with POST /v1/ask/sessions/${session.id}/messages.`, {
        headers: { location: `/v1/ask/sessions/${session.id}` },
      });
    }
    throw err;
  }
  const parts = toParts(answer.text, turn.passages);
  const answered = deps.clock.now().toISOString();
  const message: AskMessage = {
    id: newId("msg_", Date.parse(answered)),
    session_id: session.id,
    role: "assistant",
    content: contentOf(parts),
    parts,
    tokens: answer.tokens,
    model: answer.model,
    provider: answer.provider,
    finish_reason: answer.finishReason,
    context_refs: [],
    created_at: answered,
  };
  if (!appendMessage(deps.db, principal, message, given)) throw sessionGone(session.id);
  return { session_id: session.id, message, sources: given };
}

/** POST /ask/sessions/{id}/messages. */
export function postMessage(deps: AskDeps, principal: Principal, sessionId: string, body: MessageBody): Promise<AskResult> {
  return askInSession(deps, principal, getSession(deps, principal, sessionId), body);
}

export function listSessions(deps: Pick<Deps, "db">, principal: Principal, query: ListSessionsQuery): Page<AskSession> {
  const endUserId = confineToEndUser(principal, query.end_user_id) ?? undefined;
  return listSessionRows(deps.db, principal, endUserId, { limit: query.limit, cursor: query.cursor });
}

export function deleteSession(deps: Pick<Deps, "db" | "audit">, principal: Principal, id: string): void {
  deps.db.transaction(() => {
    deleteSessionRow(deps.db, principal, getSession(deps, principal, id).id);
    deps.audit.record(principal, principal, "ask_session.delete", [id]);
  })();
}

/** A session's messages: questions and answers quote transcripts, so the read is audited. */
export async function listMessages(
  deps: Pick<Deps, "db" | "audit">,
  principal: Principal,
  id: string,
  page: { limit: number; cursor?: string },
): Promise<Page<AskMessage>> {
  const session = getSession(deps, principal, id);
  const messages = listMessageRows(deps.db, principal, session.id, page);
  if (messages.data.length > 0)
    await deps.audit.access(principal, "ask.messages.read", [id, ...messages.data.map((m) => m.id)], { endUsers: [session.end_user_id] });
  return messages;
}

/**
 * A deleted recording's erasure from Ask (decision 078): sessions scoped to it go whole;
 * in library and selected sessions, each turn whose answer was given or cited its passages
 * goes (the answer quotes or restates them; the question asked about them), and a title
 * that was such a question becomes "New chat". Runs inside the erasing transaction, on the
 * recordingErased cascade.
 */
function eraseRecordingFromAsk(db: Database, tenant: Tenant, recording: { id: string; created_at: string }, now: Date): void {
  deleteRecordingSessions(db, tenant, recording.id);
  for (const turn of turnsDrawingOn(db, tenant, recording.id, recording.created_at)) {
    deleteMessage(db, turn.answerId);
    if (turn.questionId) deleteMessage(db, turn.questionId);
    recountSession(db, turn.sessionId, turn.question === null ? null : { was: defaultTitle(turn.question), by: UNTITLED }, now.toISOString());
  }
}

/** Ask follows a recording's erasure: registered on every Deps by buildDeps (decision 083). */
export function registerAskCascades(deps: Pick<Deps, "db" | "cascades">): void {
  deps.cascades.on("recordingErased", "ask", ({ tenant, recording, now }) => eraseRecordingFromAsk(deps.db, tenant, recording, now));
}
