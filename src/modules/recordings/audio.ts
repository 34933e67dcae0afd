import type { Deps } from "../../deps";
import type { Principal } from "../../http/auth";
import { downloadHeaders } from "../../http/downloads";
import { ApiError } from "../../http/errors";
import type { ByteRange } from "../../storage";
import { loadRecording } from "./service";
import type { RecordingStatus } from "./schema";

/** Statuses whose storage_key is the verified original. */
export const HAS_AUDIO: readonly RecordingStatus[] = ["uploaded", "processing", "completed", "failed"];

/** The probe's format (what the decoder identified) -> the type the audio is sent with; anything else goes as application/octet-stream. */
const CONTENT_TYPES: Record<string, string> = {
  wav: "audio/wav",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  flac: "audio/flac",
  ogg: "audio/ogg",
  webm: "audio/webm",
};

/**
 * The one range of a `Range: bytes=...` header (RFC 9110 14.1.2). null means "send it all"
 * (no header, or a form we do not serve such as several ranges); "unsatisfiable" is a 416.
 */
export function parseRange(header: string | null, size: number): ByteRange | null | "unsatisfiable" {
  const m = header?.trim().match(/^bytes=(\d*)-(\d*)$/);
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}

/**
 * GET /recordings/{id}/audio: the original bytes, whole or one range, with the type the probe
 * found, never the client's mime_type (decision 113): bytes the decoder could not identify go
 * as application/octet-stream, as an attachment.
 */
export async function downloadAudio(deps: Deps, principal: Principal, id: string, rangeHeader: string | null): Promise<Response> {
  const r = loadRecording(deps.db, principal, id);
  if (r.audio_erased_at)
    throw new ApiError(
      "resource_conflict",
      `The audio of recording ${id} was erased by retention at ${r.audio_erased_at}; its transcripts and summaries remain.`,
    );
  if (!HAS_AUDIO.includes(r.status) || !r.storage_key) {
    throw new ApiError("resource_conflict", `Recording ${id} has no uploaded audio yet (status ${r.status}).`);
  }
  await deps.audit.access(principal, "recording.audio.read", [r.id], { endUsers: [r.end_user_id] });
  const size = r.file_size_bytes ?? (await deps.storage.size(r.storage_key)) ?? 0;
  const range = parseRange(rangeHeader, size);
  if (range === "unsatisfiable") {
    throw new ApiError("range_not_satisfiable", `The range ${rangeHeader} is outside the ${size} bytes of the audio.`, {
      headers: { "content-range": `bytes */${size}` },
    });
  }
  const known = r.format && Object.hasOwn(CONTENT_TYPES, r.format) ? r.format : null;
  const headers: Record<string, string> = {
    ...downloadHeaders(known ? CONTENT_TYPES[known]! : "application/octet-stream", known ? `${r.id}.${known}` : r.id),
    "accept-ranges": "bytes",
    etag: `"${r.sha256}"`,
    "content-length": String(range ? range.end - range.start + 1 : size),
  };
  if (range) headers["content-range"] = `bytes ${range.start}-${range.end}/${size}`;
  return new Response(deps.storage.read(r.storage_key, range ?? undefined), { status: range ? 206 : 200, headers });
}
