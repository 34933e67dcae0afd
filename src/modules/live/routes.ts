import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authentication, authorize } from "../../http/auth";
import { idParam } from "../../http/schemas";
import { lastSeq, LIVE_STREAMS_PER_KEY, openLiveStream } from "./service";

export function liveRoutes(deps: Deps) {
  return new Elysia({ name: "parley.live", detail: { tags: ["Transcriptions"] } }).use(authentication(deps)).get(
    "/transcriptions/:id/live",
    async ({ principal, params, request }) => {
      const caller = authorize(principal, "transcriptions:read");
      const stream = await openLiveStream(deps, caller, params.id, lastSeq(request.headers.get("last-event-id")), request.signal);
      return new Response(stream, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" } });
    },
    {
      params: idParam,
      detail: {
        summary: "Watch a transcription grow (Server-Sent Events)",
        description: `Scope transcriptions:read. text/event-stream of a streaming recording's provisional segments as they are transcribed: \`segment\` events (id = the segment's sequence number; data {seq, start, end, text, confidence, speaker}: speaker is provisional, SPEAKER_n as the voices heard so far tell it, or null when the region is too short to tell), then \`completed\` (data as the transcription.completed event, with the final speakers over the whole recording, which may number the voices differently) or \`failed\` (data as transcription.failed), after which the stream ends. Reconnect with Last-Event-ID to get only the segments after it. At most ${LIVE_STREAMS_PER_KEY} open streams per key: 429 rate_limited beyond.`,
        responses: {
          200: {
            description: "The live transcript, as Server-Sent Events; it ends after completed or failed",
            content: { "text/event-stream": { schema: { type: "string" as const } } },
          },
        },
      },
    },
  );
}
