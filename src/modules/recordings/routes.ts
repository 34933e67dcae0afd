import { Elysia } from "elysia";
import { z } from "zod";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { UPLOAD_TARGET_PATH } from "../../http/credentials";
import { idempotency } from "../../http/idempotency";
import { binaryRequestBody, binaryResponse, headerParameters, idParam, noContent } from "../../http/schemas";
import { ApiError } from "../../http/errors";
import { pageOf } from "../../http/pagination";
import { downloadAudio } from "./audio";
import { createRecordingBody, listRecordingsQuery, recordingSchema, uploadCompleteBody, uploadReceiptSchema, uploadUrlBody, uploadUrlSchema } from "./schema";
import { createRecording, deleteRecording, getRecording, listRecordings } from "./service";
import { completeUpload } from "./upload-complete";
import { receiveUpload } from "./upload-receive";
import { issueUploadUrl } from "./upload-url";

const DEVICE = { tokens: ["device"] } as const;

/** What audio is sent and answered as: its own type, or bytes of no declared type. */
const AUDIO_TYPES = ["audio/*", "application/octet-stream"];

export function recordingsRoutes(deps: Deps) {
  const { db, clock } = deps;
  return new Elysia({ name: "parley.recordings", detail: { tags: ["Recordings"] } })
    .use(authentication(deps))
    .use(idempotency(deps))
    .post(
      "/recordings",
      ({ principal, body, set }) => {
        const caller = authorize(principal, "recordings:write", DEVICE);
        set.status = 201;
        return createRecording(deps, caller, body, clock.now());
      },
      {
        idempotent: true,
        body: createRecordingBody,
        response: { 201: recordingSchema },
        detail: {
          summary: "Create a recording",
          description: "Scope recordings:write, or a device token (device_id and end_user_id then come from the token). Idempotency-Key supported.",
        },
      },
    )
    .get("/recordings", ({ principal, query }) => listRecordings(db, authorize(principal, "recordings:read"), query), {
      query: listRecordingsQuery,
      response: { 200: pageOf(recordingSchema) },
      detail: {
        summary: "List recordings",
        description: "Scope recordings:read. Filters: end_user_id, device_id, status, recorded_after (inclusive), recorded_before (exclusive).",
      },
    })
    .get("/recordings/:id", ({ principal, params }) => getRecording(db, authorize(principal, "recordings:read"), params.id), {
      params: idParam,
      response: { 200: recordingSchema },
      detail: { summary: "Get a recording", description: "Scope recordings:read." },
    })
    .get(
      "/recordings/:id/audio",
      ({ principal, params, request }) =>
        downloadAudio(deps, authorize(principal, "recordings:read", { content: true }), params.id, request.headers.get("range")),
      {
        params: idParam,
        detail: {
          summary: "Download the original audio",
          description:
            "Scope recordings:read. Honours a single Range (206, or 416 when unsatisfiable). Sent as the type the decoder identified (audio/wav, audio/mpeg, audio/mp4, audio/flac, audio/ogg, audio/webm), otherwise application/octet-stream, never as mime_type; always Content-Disposition: attachment, X-Content-Type-Options: nosniff and Content-Security-Policy: sandbox (decision 113).",
          ...headerParameters(["Range"]),
          responses: {
            200: binaryResponse("The stored original", AUDIO_TYPES, ["ETag", "Content-Disposition", "Accept-Ranges"]),
            206: binaryResponse("The requested byte range", AUDIO_TYPES, ["ETag", "Content-Disposition", "Accept-Ranges", "Content-Range"]),
            416: {
              description: "The range lies past the end: Content-Range gives the size",
              headers: { "Content-Range": { $ref: "#/components/headers/Content-Range" } },
              content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
            },
          },
        },
      },
    )
    .delete(
      "/recordings/:id",
      ({ principal, params, set }) => {
        deleteRecording(deps, authorize(principal, "recordings:write"), params.id, clock.now());
        set.status = 204;
      },
      {
        params: idParam,
        response: noContent,
        detail: { summary: "Delete a recording", description: "Scope recordings:write. Deletes its transcriptions, summaries and stored bytes." },
      },
    )
    .post(
      "/recordings/:id/upload-url",
      ({ principal, params, body }) => issueUploadUrl(deps, authorize(principal, "recordings:write", DEVICE), params.id, body, clock.now()),
      {
        params: idParam,
        body: uploadUrlBody,
        response: { 200: uploadUrlSchema },
        detail: {
          summary: "Get a pre-signed upload URL",
          description:
            "Scope recordings:write or the recording's device token. Single-use, short-lived; chunk_index gives a URL for one chunk of a streaming upload. Repairs a recording in integrity_failure.",
        },
      },
    )
    .post(
      "/recordings/:id/upload-complete",
      ({ principal, params, body }) => completeUpload(deps, authorize(principal, "recordings:write", DEVICE), params.id, body, clock.now()),
      {
        idempotent: true,
        params: idParam,
        body: uploadCompleteBody,
        response: { 200: recordingSchema },
        detail: {
          summary: "Complete an upload",
          description:
            "Scope recordings:write or the recording's device token. With sha256: 425 until verification ends, then 200; 409 upload_integrity_failed on mismatch; 409 resource_conflict for conflicting fields; 409 encrypted_upload_v2_staging_missing when no bytes are staged.",
        },
      },
    );
}
/**
 * The pre-signed PUT target: public (the up_ token in the path is the credential), so
 * createApp mounts it outside the authenticated /v1 modules. The handler never touches
 * `body`, so Elysia leaves the request stream unread (its static analysis skips parsing;
 * `parse: "none"` answered 400 in Elysia 1.4) and receiveUpload streams it to storage.
 */
export function uploadTargetRoutes(deps: Deps) {
  const slots = deps.uploadSlots;
  return new Elysia({ name: "parley.upload-target" }).put(
    `${UPLOAD_TARGET_PATH}:token`,
    ({ params, request }) => receiveUpload(deps, slots, params.token, request),
    {
      params: z.object({ token: z.string().min(1).max(200) }),
      response: { 200: uploadReceiptSchema },
      detail: {
        tags: ["Recordings"],
        security: [],
        // The type upload-url's headers name (its content_type, else application/octet-stream).
        requestBody: binaryRequestBody("The audio file, or one chunk of a streaming upload", AUDIO_TYPES),
        summary: "Upload audio bytes",
        description:
          "No Authorization header: the URL from upload-url is the credential. 200 only once the bytes are stored durably; after any error the URL stays usable for a retry. 400 for an empty body or one shorter than the file_size_bytes given to upload-url; 408 request_timeout when the body brings under PARLEY_UPLOAD_MIN_BYTES_PER_SECOND (1024) over a PARLEY_UPLOAD_RATE_WINDOW_SECONDS (30) window; 409 while another PUT to the same URL runs; 413 over the size limit or that size; 429 over 10 concurrent uploads per project (PARLEY_MAX_CONCURRENT_UPLOADS) or 3 for one device's recordings (PARLEY_MAX_CONCURRENT_UPLOADS_PER_DEVICE); 507 when the disk is full or below PARLEY_MIN_FREE_MB.",
      },
    },
  );
}
